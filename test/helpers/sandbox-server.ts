import { createSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/sandbox';

/**
 * A sandbox on port 0 for the tests of one describe block (or for each test with `each`), always closed afterwards,
 * even when a test fails. Call it at describe level; read the running sandbox with the returned getter.
 */
export function useSandbox(options: SandboxOptions = {}, lifetime: 'all' | 'each' = 'all'): () => Sandbox {
  let sandbox: Sandbox | undefined;
  const start = async (): Promise<void> => {
    sandbox = await createSandbox({ port: 0, ...options });
  };
  const stop = async (): Promise<void> => {
    await sandbox?.close();
    sandbox = undefined;
  };
  if (lifetime === 'each') {
    beforeEach(start);
    afterEach(stop);
  } else {
    beforeAll(start);
    afterAll(stop);
  }
  return () => {
    if (!sandbox) throw new Error('the sandbox is not running: use the getter inside a test or hook');
    return sandbox;
  };
}

/** Moves sandbox time forward through the control route, as a black-box test would. */
export async function advanceClock(sandbox: Sandbox, seconds: number): Promise<void> {
  const response = await fetch(`${sandbox.url}/sandbox/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ advanceSeconds: seconds }),
  });
  if (response.status !== 200) throw new Error(`POST /sandbox/clock answered ${response.status}: ${await response.text()}`);
}

export interface RawResponse<T = any> {
  status: number;
  headers: Headers;
  /** The body exactly as received, for assertions on the bytes (e.g. "100.10"). */
  text: string;
  body: T;
}

/** A GET (or other method) whose body is read as text and, when it is JSON, parsed too. */
export async function request<T = any>(url: string, init: RequestInit = {}): Promise<RawResponse<T>> {
  const response = await fetch(url, { redirect: 'manual', ...init });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body: body as T };
}
