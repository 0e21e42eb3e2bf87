/** Small fetch helpers with a deadline on every call, so no step of the bench can hang. */

const DEFAULT_TIMEOUT_MS = 30_000;

export interface GraphQLAnswer<T> {
  status: number;
  contentType: string;
  /** The exact bytes of the answer, for the ceiling server and for byte comparisons. */
  text: string;
  data?: T | null;
  errors?: { message: string; path?: unknown[]; extensions?: Record<string, unknown> }[];
}

export async function postGraphQL<T>(
  url: string,
  body: string,
  headers: Record<string, string> = {},
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<GraphQLAnswer<T>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let parsed: { data?: T | null; errors?: GraphQLAnswer<T>['errors'] } = {};
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    throw new Error(`${url} answered HTTP ${response.status} with a body that is not JSON: ${text.slice(0, 300)}`);
  }
  return { status: response.status, contentType: response.headers.get('content-type') ?? 'application/json', text, ...parsed };
}

/** A successful GraphQL answer or an error that says what came back instead. */
export function expectData<T>(answer: GraphQLAnswer<T>, what: string): T {
  if (answer.status !== 200 || answer.errors?.length || !answer.data) {
    throw new Error(`${what}: expected data without errors, got HTTP ${answer.status}: ${answer.text.slice(0, 500)}`);
  }
  return answer.data;
}

export async function json<T>(method: string, url: string, body?: unknown, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url}: HTTP ${response.status} ${text.slice(0, 300)}`);
  return (text === '' ? undefined : JSON.parse(text)) as T;
}
