import { startStack, type Stack } from '../helpers/stack';
import { queryOverBrowserSocket, type BrowserSocketOutcome } from '../helpers/ws-client';

type Outcome = BrowserSocketOutcome;

/**
 * Cross-site WebSocket hijacking: a page on another site opens a WebSocket to the gateway, and the browser adds the
 * victim's session cookie. Cookie sign-in must come from the gateway's own origin or ALLOWED_ORIGINS.
 */
describe('WebSocket origin check for cookie sign-in', () => {
  let stack: Stack;
  let session: string;

  beforeAll(async () => {
    stack = await startStack({ env: { ALLOWED_ORIGINS: 'https://app.example.com' } });
    session = await stack.signIn('john', 'doe');
  });

  afterAll(async () => {
    await stack?.close();
  });

  /** One query over a WebSocket opened with these upgrade headers, as a browser on `origin` would open it. */
  const queryOver = (headers: Record<string, string>, connectionParams: Record<string, unknown> = {}): Promise<Outcome> =>
    queryOverBrowserSocket(stack.gateway.url, '{ viewer { accounts { id accountNumber { iban } } } }', headers, connectionParams);

  it('refuses a cookie sign-in from a foreign origin, saying why', async () => {
    const outcome = await queryOver({ origin: 'http://evil.example', cookie: `bankgraph_session=${session}` });
    expect(outcome.data).toBeUndefined();
    expect(outcome.closeCode).toBe(4403);
    expect(outcome.closeReason).toMatch(/ALLOWED_ORIGINS/);
  });

  it('accepts a cookie sign-in from the gateway’s own origin and from ALLOWED_ORIGINS', async () => {
    for (const origin of [new URL(stack.gateway.url).origin, 'https://app.example.com']) {
      const outcome = await queryOver({ origin, cookie: `bankgraph_session=${session}` });
      expect(outcome.errors).toBeUndefined();
      expect((outcome.data as { viewer: { accounts: unknown[] } }).viewer.accounts.length).toBeGreaterThan(0);
    }
  });

  it('leaves bearer-token connections alone, whatever their origin', async () => {
    const outcome = await queryOver({ origin: 'http://evil.example', cookie: `bankgraph_session=${session}` }, { authorization: `Bearer ${session}` });
    expect(outcome.errors).toBeUndefined();
    expect((outcome.data as { viewer: { accounts: unknown[] } }).viewer.accounts.length).toBeGreaterThan(0);
  });
});
