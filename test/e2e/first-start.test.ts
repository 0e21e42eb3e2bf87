import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

import { freePort } from '../helpers/ports';

const ROOT = join(__dirname, '..', '..');

/**
 * What a newcomer does on a fresh machine: `npm start` (its entry point run from the sources, as the build would run
 * it), on whatever PORT they chose, then `npm run sandbox:login` in another terminal that knows nothing of that PORT.
 * Each test has a TMPDIR of its own, where gateways note where they run, so no other gateway on the machine is seen.
 */
describe('first start: ports and sandbox:login', () => {
  let home: string;
  const children: ChildProcess[] = [];
  const blockers: Server[] = [];

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'bankgraph-first-start-'));
  });

  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(blockers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
    rmSync(home, { recursive: true, force: true });
  });

  /** The environment of a fresh shell: nothing of the gateway's settings but what the test names. */
  function shellEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const { PATH, HOME } = process.env;
    return { PATH, HOME, TMPDIR: home, NODE_ENV: 'development', LOG_LEVEL: 'warn', STORE_URL: `sqlite://${join(home, 'gateway.sqlite')}`, ...extra };
  }

  function startGateway(env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
    const child = spawn(process.execPath, ['-r', './test/helpers/swc-register.js', 'src/index.ts'], {
      cwd: ROOT,
      env: shellEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, output: () => output, exited };
  }

  async function whenUp(gateway: ReturnType<typeof startGateway>): Promise<string> {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const match = /bankgraph is up: (http:\/\/\S+)\/graphql/.exec(gateway.output());
      if (match) return match[1]!;
      if (gateway.child.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`the gateway did not start:\n${gateway.output()}`);
  }

  function sandboxLogin(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ['-r', './test/helpers/swc-register.js', 'src/cli/sandbox-login.ts', ...args],
        { cwd: ROOT, env: shellEnv(env), timeout: 30_000 },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  async function takenPort(): Promise<number> {
    const server = createServer();
    blockers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as { port: number }).port;
  }

  it('PORT=<port> npm start, then sandbox:login -- john with no PORT: the token works on that gateway', async () => {
    const port = await freePort();
    const gateway = startGateway({ PORT: String(port) });
    const url = await whenUp(gateway);
    expect(url).toBe(`http://localhost:${port}`);
    // The embedded sandbox took a free port of its own and the banner says where.
    expect(gateway.output()).toMatch(/embedded sandbox provider: http:\/\/127\.0\.0\.1:\d+ \(SANDBOX_PORT fixes its port\)/);

    const run = await sandboxLogin({}, 'john');
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const answer = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${run.stdout.trim()}` },
      body: JSON.stringify({ query: '{ viewer { accounts { id } } }' }),
    });
    const body = (await answer.json()) as { data?: { viewer: { accounts: unknown[] } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body.data!.viewer.accounts.length).toBeGreaterThan(0);
  }, 60_000);

  it('prints the address it listens on beside a PUBLIC_URL that differs, the CORS_ORIGINS it admits, and that ALLOWED_ORIGINS is now CORS_ORIGINS', async () => {
    const port = await freePort();
    const gateway = startGateway({
      PORT: String(port),
      PUBLIC_URL: 'http://localhost:5173',
      CORS_ORIGINS: 'http://localhost:5173',
      ALLOWED_ORIGINS: 'https://app.example.com',
    });
    expect(await whenUp(gateway)).toBe('http://localhost:5173');
    const banner = gateway.output();
    expect(banner).toContain(`listening on http://127.0.0.1:${port} (HOST, PORT); browsers and the bank use PUBLIC_URL http://localhost:5173`);
    expect(banner).toContain('(CORS_ORIGINS): http://localhost:5173, https://app.example.com');
    expect(banner).toContain('ALLOWED_ORIGINS is now CORS_ORIGINS');
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

    // On its PUBLIC_URL's own address the banner has no second one to name.
    const plain = startGateway({ PORT: String(await freePort()) });
    await whenUp(plain);
    expect(plain.output()).not.toContain('listening on');
  }, 60_000);

  it('npm start notes nothing in a registry folder another user left open (0777), says why, and still serves', async () => {
    const planted = join(home, `bankgraph-${userInfo().uid}`);
    mkdirSync(planted);
    chmodSync(planted, 0o777);
    const gateway = startGateway({ PORT: '0' });
    const url = await whenUp(gateway);
    expect(gateway.output()).toContain(`The gateway registry folder ${planted} is open to other users (mode 777).`);
    expect(readdirSync(planted)).toEqual([]);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  }, 60_000);

  it('sandbox:login signs in at no relay named in a registry folder another user made first, and says why', async () => {
    const relayed: string[] = [];
    const relay = createHttpServer((req, res) => {
      relayed.push(`${req.method} ${req.url}`);
      res.writeHead(404).end();
    });
    blockers.push(relay);
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const planted = join(home, `bankgraph-${userInfo().uid}`);
    mkdirSync(join(planted, 'gateways'), { recursive: true });
    // Alive (this test's own process) and of this checkout: what the old reader trusted.
    const entry = { url: `http://127.0.0.1:${(relay.address() as { port: number }).port}`, pid: process.pid, cwd: ROOT };
    writeFileSync(join(planted, 'gateways', '1.json'), JSON.stringify(entry));
    for (const dir of [planted, join(planted, 'gateways'), join(planted, 'gateways', '1.json')]) chownSync(dir, 65534, 65534);
    const run = await sandboxLogin({}, 'john');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`The gateway registry folder ${planted} is owned by uid 65534, not by you (uid ${userInfo().uid}).`);
    expect(run.stderr).toContain('--gateway <url>');
    expect(relayed).toEqual([]);
  });

  it('sandbox:login with no gateway running says how to start or point at one', async () => {
    const run = await sandboxLogin({}, 'john');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('no running gateway found on this machine');
    expect(run.stderr).toContain('--gateway <url>, or the PORT (or PUBLIC_URL) it was started with');
  });

  it('sandbox:login at a PORT where nothing listens says so, not "fetch failed"', async () => {
    const port = await freePort();
    const run = await sandboxLogin({ PORT: String(port) }, 'john');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`no gateway answers at http://localhost:${port}.`);
  });

  it('a PORT in use stops start-up with one line that names PORT, and nothing else', async () => {
    const port = await takenPort();
    const gateway = startGateway({ PORT: String(port) });
    expect(await gateway.exited).toBe(1);
    expect(gateway.output().trim()).toBe(
      `bankgraph failed to start: port ${port} on 127.0.0.1 is in use: stop what listens there, or move the gateway with PORT (PORT=${port + 1} npm start)`,
    );
  }, 30_000);

  it('a SANDBOX_PORT in use stops start-up with one line that names SANDBOX_PORT', async () => {
    const port = await takenPort();
    const gateway = startGateway({ PORT: '0', SANDBOX_PORT: String(port) });
    expect(await gateway.exited).toBe(1);
    expect(gateway.output().trim()).toBe(
      `bankgraph failed to start: the embedded sandbox's port ${port} is in use: leave SANDBOX_PORT unset for a free port, or set another`,
    );
  }, 30_000);
});
