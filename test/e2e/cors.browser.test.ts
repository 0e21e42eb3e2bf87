import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { launchChromium } from '../helpers/chromium';
import { startStack, type Stack } from '../helpers/stack';

const VIEWER = '{ viewer { accounts { id } } }';

/** What one page saw calling the gateway over each transport with the session cookie. */
interface Seen {
  fetch: { ok: true; accounts: number; requestId: string | null } | { ok: false; error: string };
  webSocket: { accounts: number } | { closeCode: number };
  eventSource: { accounts: number } | { failed: true };
}

/**
 * A browser app on its own origin, as a Vite dev server serves one: pages on two other ports of localhost (the
 * gateway's site), one of them in CORS_ORIGINS. Chromium itself sends the preflight, the Origin, the Sec-Fetch-*
 * headers and the cookie, and decides from the gateway's CORS headers what the page may read.
 */
describe('a browser app on its own origin, in Chromium', () => {
  let stack: Stack;
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  const servers: Server[] = [];
  let listed: string;
  let unlisted: string;
  let gateway: string;

  /** A blank page on a port of its own, as an app's dev server would serve it. */
  async function appServer(): Promise<string> {
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://localhost:${(server.address() as AddressInfo).port}`;
  }

  beforeAll(async () => {
    listed = await appServer();
    unlisted = await appServer();
    stack = await startStack({ env: { CORS_ORIGINS: listed } });
    // The name the app uses for the gateway: localhost, like the app's, so the two are one site and share the cookie.
    gateway = `http://localhost:${new URL(stack.gateway.url).port}`;
    const session = await stack.signIn('john', 'doe');
    browser = await launchChromium();
    await browser.context.addCookies([{ name: 'bankgraph_session', value: session, url: gateway, httpOnly: true, sameSite: 'Lax' }]);
  }, 15 * 60_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });

  /** Calls the gateway from a page of `origin` by fetch with credentials, a graphql-ws WebSocket and an EventSource. */
  async function callFrom(page: Page, origin: string): Promise<Seen> {
    await page.goto(`${origin}/`);
    return page.evaluate(
      async ({ gatewayUrl, query }) => {
        const accountsOf = (payload: unknown): number => (payload as { data: { viewer: { accounts: unknown[] } } }).data.viewer.accounts.length;
        const viaFetch = async (): Promise<Seen['fetch']> => {
          try {
            const response = await fetch(`${gatewayUrl}/graphql`, {
              method: 'POST',
              credentials: 'include',
              headers: { 'content-type': 'application/json', 'graphql-client-name': 'cors-test' },
              body: JSON.stringify({ query }),
            });
            return { ok: true, accounts: accountsOf(await response.json()), requestId: response.headers.get('x-request-id') };
          } catch (error) {
            return { ok: false, error: String(error) };
          }
        };
        const viaWebSocket = (): Promise<Seen['webSocket']> =>
          new Promise((resolve) => {
            const socket = new WebSocket(`${gatewayUrl.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
            socket.onopen = () => socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
            socket.onmessage = (event) => {
              const message = JSON.parse(String(event.data)) as { type: string; payload?: unknown };
              if (message.type === 'connection_ack') socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query } }));
              if (message.type === 'next') {
                resolve({ accounts: accountsOf(message.payload) });
                socket.close();
              }
            };
            socket.onclose = (event) => resolve({ closeCode: event.code });
          });
        const viaEventSource = (): Promise<Seen['eventSource']> =>
          new Promise((resolve) => {
            const source = new EventSource(`${gatewayUrl}/graphql/stream?${new URLSearchParams({ query })}`, { withCredentials: true });
            source.addEventListener('next', (event) => {
              source.close();
              resolve({ accounts: accountsOf(JSON.parse((event as unknown as { data: string }).data)) });
            });
            source.onerror = () => {
              source.close();
              resolve({ failed: true });
            };
          });
        return { fetch: await viaFetch(), webSocket: await viaWebSocket(), eventSource: await viaEventSource() };
      },
      { gatewayUrl: gateway, query: VIEWER },
    );
  }

  it('serves a page on an origin in CORS_ORIGINS by fetch with credentials, WebSocket and EventSource, signed in by the cookie', async () => {
    const seen = await callFrom(browser!.page, listed);
    expect(seen.fetch).toEqual({ ok: true, accounts: expect.any(Number), requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect((seen.fetch as { accounts: number }).accounts).toBeGreaterThan(0);
    expect(seen.webSocket).toEqual({ accounts: (seen.fetch as { accounts: number }).accounts });
    expect(seen.eventSource).toEqual({ accounts: (seen.fetch as { accounts: number }).accounts });
  });

  it('blocks a page on an origin not listed on every transport, though it is of the same site and the browser sends the cookie', async () => {
    const seen = await callFrom(browser!.page, unlisted);
    expect(seen.fetch).toEqual({ ok: false, error: expect.stringMatching(/TypeError/) });
    expect(seen.webSocket).toEqual({ closeCode: 4403 });
    expect(seen.eventSource).toEqual({ failed: true });
  });
});
