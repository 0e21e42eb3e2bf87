import { createSandbox, type Sandbox } from '../../src/sandbox/sandbox';
import { jsonLineLog } from '../../src/sandbox/log';
import { getUserToken, bearer } from '../helpers/sandbox-auth';
import { waitFor } from '../helpers/wait-for';

/** The sandbox writes into the gateway's JSON log when embedded: structured lines only, and no noise for hang-ups. */
describe('sandbox log', () => {
  let sandbox: Sandbox;
  const lines: string[] = [];
  let consoleError: jest.SpyInstance;

  beforeEach(async () => {
    lines.length = 0;
    consoleError = jest.spyOn(console, 'error');
    sandbox = await createSandbox({ port: 0, log: jsonLineLog((line) => lines.push(line)) });
  });

  afterEach(async () => {
    consoleError.mockRestore();
    await sandbox.close();
  });

  const addFault = (spec: object): Promise<Response> =>
    fetch(`${sandbox.url}/sandbox/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec) });

  it('does not report a client that hung up as an error', async () => {
    const token = await getUserToken(sandbox, { username: 'john', password: 'doe' });
    await addFault({ match: 'GET /data/v1/accounts', latencyMs: 200, times: 1 });
    const gaveUp = new AbortController();
    const abandoned = fetch(`${sandbox.url}/data/v1/accounts`, { headers: bearer(token), signal: gaveUp.signal }).catch(() => 'aborted');
    setTimeout(() => gaveUp.abort(), 20);
    expect(await abandoned).toBe('aborted');
    // Served after the abandoned request's delay has run out, so its handler has finished by then.
    await addFault({ match: 'GET /data/v1/accounts', latencyMs: 400, times: 1 });
    expect((await fetch(`${sandbox.url}/data/v1/accounts`, { headers: bearer(token) })).status).toBe(200);
    expect(consoleError).not.toHaveBeenCalled();
    expect(lines.filter((line) => line.includes('"level":"error"'))).toEqual([]);
  });

  it('writes a real failure as one JSON line', async () => {
    sandbox.context.clock.at(0, () => {
      throw new Error('boom');
    });
    const line = await waitFor(() => lines[0], 'a log line');
    expect(line.endsWith('\n')).toBe(true);
    expect(line.trimEnd().includes('\n')).toBe(false);
    expect(JSON.parse(line)).toMatchObject({ level: 'error', service: 'sandbox', msg: 'a scheduled task failed', err: { type: 'Error', message: 'boom' } });
    expect(consoleError).not.toHaveBeenCalled();
  });
});
