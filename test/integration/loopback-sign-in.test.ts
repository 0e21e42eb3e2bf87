import { request as httpRequest } from 'node:http';
import { freePort } from '../helpers/ports';
import { answerBankPage, startSignIn } from '../helpers/sign-in-steps';
import { graphqlAt, startStack, type Stack } from '../helpers/stack';

const JOHN = { username: 'john', password: 'doe' };
const ACCOUNTS = '{ viewer { accounts { id } } }';

/** GET with a Host header of the test's choosing (fetch sends the URL's own), without following a redirect. */
function getWithHost(url: string, host: string): Promise<{ status: number; location?: string; loginCookie?: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers: { host } }, (response) => {
      response.resume();
      const cookie = (response.headers['set-cookie'] ?? []).find((value) => value.startsWith('bankgraph_login='));
      resolve({ status: response.statusCode!, location: response.headers.location, loginCookie: cookie?.split(';')[0] });
    });
    request.on('error', reject);
    request.end();
  });
}

function redirectUriOf(bankPage: string): string | null {
  return new URL(bankPage).searchParams.get('redirect_uri');
}

async function errorMessage(response: Response): Promise<string> {
  return ((await response.json()) as { error: { message: string } }).error.message;
}

/**
 * A gateway started as `PORT=<port> npm start` is (PUBLIC_URL unset: http://localhost:<port>), reached the way a
 * developer's browser reaches it: at http://127.0.0.1:<port> or at http://localhost:<port>. Browsers keep cookies
 * per name, so a sign-in must come back to the name it started on.
 */
describe('signing in on whichever loopback name was used (development)', () => {
  let stack: Stack;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    stack = await startStack({ env: { PORT: String(port) } });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('runs with the default PUBLIC_URL, http://localhost:<port>', () => {
    expect(stack.config.server.publicUrl).toBe(`http://localhost:${port}`);
  });

  it.each(['127.0.0.1', 'localhost'])('finishes the JSON flow started at http://%s:<port> on that name', async (name) => {
    const origin = `http://${name}:${port}`;
    const started = await startSignIn(origin, '?response=json');
    expect(started.status).toBe(302);
    expect(redirectUriOf(started.bankPage!)).toBe(`${origin}/auth/callback`);
    const callback = await answerBankPage(started.bankPage!, JOHN);
    expect(callback.startsWith(`${origin}/auth/callback?`)).toBe(true);

    const done = await fetch(callback, { headers: { accept: 'application/json', 'login-binding': started.binding! } });
    expect(done.status).toBe(200);
    const { sessionToken } = (await done.json()) as { sessionToken: string };
    const viewer = await graphqlAt<{ viewer: { accounts: unknown[] } }>(origin, ACCOUNTS, {}, sessionToken);
    expect(viewer.errors).toBeUndefined();
    expect(viewer.data!.viewer.accounts.length).toBeGreaterThan(0);
  });

  it.each(['127.0.0.1', 'localhost'])(
    "finishes a browser's sign-in started at http://%s:<port> there, with the cookie it holds for that name",
    async (name) => {
      const origin = `http://${name}:${port}`;
      const started = await startSignIn(origin, '?returnTo=/graphql');
      expect(started.loginCookie).toBeDefined();
      const callback = await answerBankPage(started.bankPage!, JOHN);
      expect(callback.startsWith(`${origin}/auth/callback?`)).toBe(true);

      const done = await fetch(callback, { headers: { cookie: started.loginCookie!, accept: 'text/html' }, redirect: 'manual' });
      expect(done.status).toBe(302);
      // A relative redirect: the browser stays on the name it used.
      expect(done.headers.get('location')).toBe('/graphql');
      const session = done.headers.getSetCookie().find((cookie) => cookie.startsWith('bankgraph_session='))!;
      const token = decodeURIComponent(/^bankgraph_session=([^;]+)/.exec(session)![1]!);
      expect((await graphqlAt(origin, ACCOUNTS, {}, undefined, { cookie: `bankgraph_session=${encodeURIComponent(token)}` })).errors).toBeUndefined();
    },
  );

  it('says where a sign-in started and where it came back, naming PUBLIC_URL, when the browser used an address that is not loopback', async () => {
    // A LAN name for this machine: not a loopback name, so the bank is sent PUBLIC_URL's callback.
    const started = await getWithHost(`http://127.0.0.1:${port}/auth/login?returnTo=/graphql`, `gateway.test:${port}`);
    expect(started.status).toBe(302);
    expect(redirectUriOf(started.location!)).toBe(`http://localhost:${port}/auth/callback`);
    const callback = await answerBankPage(started.location!, JOHN);

    // The browser holds its login cookie for gateway.test, so it sends none to localhost.
    const page = await fetch(callback, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(401);
    const html = await page.text();
    expect(html).toContain(`This sign-in was started at http://gateway.test:${port} but came back to http://localhost:${port}`);
    expect(html).toContain(`open the gateway at its PUBLIC_URL (http://localhost:${port}) or set PUBLIC_URL to the address you use`);
  });

  it('still tells a browser or app that did not start the sign-in, on the same address, that it was started elsewhere', async () => {
    const origin = `http://localhost:${port}`;
    const other = await startSignIn(origin, '');
    const attempts: Record<string, string>[] = [{}, { cookie: other.loginCookie! }, { 'login-binding': other.binding! }];
    for (const headers of attempts) {
      // A state is used up by its first callback: one sign-in per attempt.
      const attacker = await startSignIn(origin, '?response=json');
      const callback = await answerBankPage(attacker.bankPage!, JOHN);
      const refused = await fetch(callback, { headers: { accept: 'application/json', ...headers } });
      expect(refused.status).toBe(401);
      expect(await errorMessage(refused)).toBe('This sign-in was started in another browser or app, so it cannot be finished here; start again.');
    }
  });
});

/** In production PUBLIC_URL is what the bank has registered: the Host header never changes the callback. */
describe('signing in with NODE_ENV=production: PUBLIC_URL alone', () => {
  let stack: Stack;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    stack = await startStack({
      env: {
        NODE_ENV: 'production',
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_URL: `http://localhost:${port}`,
        ALLOW_INSECURE_PUBLIC_URL: 'true',
        PROVIDER: 'sandbox',
        IDENTITY: 'bank',
        LOG_LEVEL: 'silent',
        TOKEN_ENCRYPTION_KEY: 'ab'.repeat(32),
        METRICS_TOKEN: 'metrics-token-0123456789',
      },
    });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it("sends the bank PUBLIC_URL's callback for a sign-in started at 127.0.0.1, and an app finishes it there", async () => {
    const started = await startSignIn(`http://127.0.0.1:${port}`, '?response=json');
    expect(redirectUriOf(started.bankPage!)).toBe(`http://localhost:${port}/auth/callback`);
    const callback = await answerBankPage(started.bankPage!, JOHN);
    expect(callback.startsWith(`http://localhost:${port}/auth/callback?`)).toBe(true);
    const done = await fetch(callback, { headers: { accept: 'application/json', 'login-binding': started.binding! } });
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ sessionToken: expect.any(String) });
  });

  it('tells a browser that started at 127.0.0.1 and came back to PUBLIC_URL why, and what to change', async () => {
    const started = await startSignIn(`http://127.0.0.1:${port}`, '?returnTo=/graphql');
    const callback = await answerBankPage(started.bankPage!, JOHN);
    // The login cookie was set on 127.0.0.1; the browser sends none to localhost.
    const refused = await fetch(callback, { headers: { accept: 'application/json' } });
    expect(refused.status).toBe(401);
    expect(await errorMessage(refused)).toBe(
      `This sign-in was started at http://127.0.0.1:${port} but came back to http://localhost:${port}, and a browser sends the sign-in's cookie only ` +
        `to the address that set it, so it cannot be finished here: open the gateway at its PUBLIC_URL (http://localhost:${port}) or set PUBLIC_URL ` +
        'to the address you use, then start again.',
    );
  });
});
