import { request as httpRequest } from 'node:http';
import { startTestIdp, type TestIdp } from '../helpers/jwks-server';
import { startStack, type Stack } from '../helpers/stack';

/** The playground as HTTP sees it (the browser test drives it for real): page, policy, assets, caching. */
describe('the playground over HTTP', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });

  afterAll(async () => {
    await stack?.close();
  });

  const host = (): string => new URL(stack.gateway.url).host;

  async function page(path: string, accept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'): Promise<{ response: Response; html: string }> {
    const response = await fetch(`${stack.gateway.url}${path}`, { headers: { accept } });
    return { response, html: await response.text() };
  }

  it('serves GraphiQL to browsers at / and GET /graphql, with a strict CSP and no inline script', async () => {
    const nonces = new Set<string>();
    for (const path of ['/', '/graphql']) {
      const { response, html } = await page(path);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const policy = response.headers.get('content-security-policy')!;
      const nonce = /'nonce-([A-Za-z0-9+/=]{24})'/.exec(policy)?.[1];
      expect(policy).toBe(
        `default-src 'self'; script-src 'self'; style-src 'self' 'nonce-${nonce}'; img-src 'self' data:; font-src 'self' data:; ` +
          `connect-src 'self' ws://${host()} wss://${host()}; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
      );
      // The page hands its style nonce to playground.js, and a new page gets a new one.
      expect(html).toContain(`<meta name="bankgraph-style-nonce" content="${nonce}">`);
      nonces.add(nonce!);
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(html).toContain('href="/auth/login?returnTo=/graphql"');
      expect(html).toContain('Sign in with the sandbox bank');
      // Every script is a file from this origin: no inline code, no CDN.
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
      expect(scripts.length).toBe(5);
      for (const [, attributes, body] of scripts) {
        expect(attributes).toMatch(/src="\/playground\/assets\/[0-9a-f]{16}\/[\w.-]+\.js"/);
        expect(body).toBe('');
      }
      expect(html).not.toMatch(/https?:\/\//);
    }
    expect(nonces.size).toBe(2);
  });

  it('tells the page who is signed in, from the session cookie only', async () => {
    const session = async (headers: Record<string, string>) => {
      const response = await fetch(`${stack.gateway.url}/playground/session`, { headers });
      expect(response.headers.get('cache-control')).toBe('no-store');
      return response.json();
    };
    expect(await session({})).toEqual({ signedIn: false });
    const token = await stack.signIn('john', 'doe');
    expect(await session({ cookie: `bankgraph_session=${encodeURIComponent(token)}` })).toEqual({
      signedIn: true,
      userId: expect.stringMatching(/^user_/),
      holderName: 'John Doe',
    });
    // Each session names its own holder, as that user's own bank gives it.
    const jane = await stack.signIn('jane', 'doe');
    expect(await session({ cookie: `bankgraph_session=${encodeURIComponent(jane)}` })).toMatchObject({ signedIn: true, holderName: 'Jane Smith' });
    expect(await session({ cookie: 'bankgraph_session=expired-or-made-up' })).toEqual({ signedIn: false, reason: expect.stringContaining('sign in again') });
    // A bearer token (a merchant key or a session token sent by a program) is not the page's sign-in.
    expect(await session({ authorization: `Bearer ${token}` })).toEqual({ signedIn: false });
  });

  it('fills the Payment tab with a payment the sandbox seeded, not a placeholder, and names no idempotency key', async () => {
    const { html } = await page('/graphql');
    const script = await (await fetch(`${stack.gateway.url}${/src="(\/playground\/assets\/[0-9a-f]{16}\/playground\.js)"/.exec(html)![1]!}`)).text();
    const tabs = JSON.parse(/var EXAMPLES = (.*);\n/.exec(script)![1]!) as { query: string; variables?: string }[];
    const paymentTab = tabs.find((tab) => tab.query.includes('query Payment('))!;
    const variables = JSON.parse(paymentTab.variables!) as { id: string; paymentId: string; input: Record<string, unknown> };
    const { payments } = await stack.sandboxJson<{ payments: { id: string; status: string }[] }>('GET', '/sandbox/fixtures');
    const seeded = payments.find((payment) => payment.status === 'settled')!.id;
    expect(variables).toEqual({ id: seeded, paymentId: seeded, input: { paymentId: seeded, amountInMinor: 100, reference: 'playground' } });
    expect(script).not.toContain('<payment id>');
    const payment = await stack.graphql<{ payment: { paymentId: string } | null }>(
      'query ($id: ID!) { payment(id: $id) { paymentId } }',
      { id: seeded },
      stack.merchantKey,
    );
    expect(payment.data?.payment?.paymentId).toBe(seeded);
  });

  it('puts only a well-formed Host into the policy', async () => {
    const policy = await new Promise<string | undefined>((resolve, reject) => {
      const request = httpRequest(
        `${stack.gateway.url}/`,
        { headers: { accept: 'text/html', host: "evil.example; script-src 'unsafe-inline'" } },
        (response) => {
          response.resume();
          resolve(response.headers['content-security-policy'] as string | undefined);
        },
      );
      request.on('error', reject);
      request.end();
    });
    expect(policy).toContain("connect-src 'self';");
    expect(policy).not.toContain('evil');
  });

  it('still answers GraphQL clients at GET /graphql', async () => {
    const response = await fetch(`${stack.gateway.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { accept: 'application/graphql-response+json', 'apollo-require-preflight': 'true' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('serves the assets from the installed packages, cacheable forever under their content hash, gzipped on request', async () => {
    const { html } = await page('/');
    const urls = [...html.matchAll(/(?:src|href)="(\/playground\/assets\/[^"]+)"/g)].map((match) => match[1]!);
    expect(urls.map((url) => url.split('/').pop())).toEqual([
      'graphiql.min.css',
      'playground.css',
      'react.production.min.js',
      'react-dom.production.min.js',
      'graphql-ws.min.js',
      'graphiql.min.js',
      'playground.js',
    ]);
    for (const url of urls) {
      const response = await fetch(`${stack.gateway.url}${url}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(url.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const graphiql = urls.find((url) => url.endsWith('graphiql.min.js'))!;
    const zipped = await fetch(`${stack.gateway.url}${graphiql}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect((await zipped.text()).length).toBeGreaterThan(1_000_000);
    // An old or made-up hash is not served (it would be cached forever with the wrong content).
    expect((await fetch(`${stack.gateway.url}${graphiql.replace(/[0-9a-f]{16}/, '0000000000000000')}`)).status).toBe(404);
    expect((await fetch(`${stack.gateway.url}/playground/assets/../../package.json`)).status).toBe(404);
  });
});

/** App identity makes no sessions: the page and its first tab say what authenticates its requests instead. */
describe('the playground over HTTP, with app identity (AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE)', () => {
  let idp: TestIdp;
  let stack: Stack;

  beforeAll(async () => {
    idp = await startTestIdp();
    stack = await startStack({ env: { AUTH_JWKS_URL: idp.jwksUrl, AUTH_ISSUER: idp.issuer, AUTH_AUDIENCE: 'bankgraph-api' } });
  });

  afterAll(async () => {
    await stack?.close();
    await idp?.close();
  });

  async function fetchText(path: string): Promise<string> {
    const response = await fetch(`${stack.gateway.url}${path}`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    return response.text();
  }

  it('says requests carry the app’s access token and offers Connect, with no bank sign-in', async () => {
    const html = await fetchText('/graphql');
    expect(html).toContain("App identity: every request carries your app's access token; Connect adds the sandbox bank to its user.");
    expect(html).toContain('id="access-token"');
    expect(html).toContain('Connect the sandbox bank');
    expect(html).not.toContain('/auth/login');
    expect(html).not.toContain('Sign in');
  });

  it('opens on a first tab that explains the access token and POST /auth/connections, not a session cookie', async () => {
    const html = await fetchText('/graphql');
    const script = await fetchText(/src="(\/playground\/assets\/[0-9a-f]{16}\/playground\.js)"/.exec(html)![1]!);
    const tabs = JSON.parse(/var EXAMPLES = (.*);\n/.exec(script)![1]!) as { query: string }[];
    const welcome = tabs[0]!.query.slice(0, tabs[0]!.query.indexOf('query ViewerGraph'));
    expect(welcome).toContain('"Authorization: Bearer <token>", over HTTP and WebSocket alike');
    expect(welcome).toContain('POST /auth/connections');
    expect(welcome).not.toMatch(/session cookie|Sign in/);
  });
});
