import type { Page } from 'playwright-core';
import { launchChromium } from '../helpers/chromium';
import { dataOf } from '../helpers/money';
import { MULTIPART_ACCEPT } from '../helpers/http-stream-client';
import { startStack, type Stack } from '../helpers/stack';

const START = 'mutation { startDataTask(input: { resource: ACCOUNTS }) { id } }';
const TASK_UPDATED = 'subscription Task($id: ID!) { dataTaskUpdated(id: $id) { id status } }';

/**
 * The HTTP streams' cookie rule against what a real browser sends (its own Sec-Fetch-* headers, which a test client
 * can only imitate): a page of the gateway's origin streams with the session cookie through EventSource and fetch,
 * and the same URLs fetched in no-cors mode, as any page of the site could, are refused before they stream.
 */
describe('HTTP streams and the session cookie in Chromium', () => {
  let stack: Stack;
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  let page: Page;
  let id: string;

  beforeAll(async () => {
    stack = await startStack({ env: { SANDBOX_TIME_SCALE: '0.001' } });
    const session = await stack.signIn('john', 'doe');
    id = dataOf(await stack.graphql<{ startDataTask: { id: string } }>(START, {}, session)).startDataTask.id;
    browser = await launchChromium();
    page = browser.page;
    await browser.context.addCookies([{ name: 'bankgraph_session', value: session, url: stack.gateway.url, httpOnly: true, sameSite: 'Lax' }]);
    // A page of the gateway's own origin with no CSP of its own to get in the way.
    await page.goto(`${stack.gateway.url}/healthz`);
  }, 15 * 60_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  const search = (): string => `?${new URLSearchParams({ query: TASK_UPDATED, variables: JSON.stringify({ id }) })}`;

  it('streams to an EventSource of the gateway’s own page, signed in by the cookie alone', async () => {
    const data = await page.evaluate(
      (url) =>
        new Promise<string>((resolve, reject) => {
          const source = new EventSource(url);
          source.addEventListener('next', (event) => {
            source.close();
            resolve((event as unknown as { data: string }).data);
          });
          source.onerror = () => {
            source.close();
            reject(new Error('the EventSource failed'));
          };
        }),
      `/graphql/stream${search()}`,
    );
    expect((JSON.parse(data) as { data: { dataTaskUpdated: { id: string } } }).data.dataTaskUpdated.id).toBe(id);
  });

  it('streams multipart to a fetch of the gateway’s own page that forces a preflight', async () => {
    const answer = await page.evaluate(
      async ({ url, accept }) => {
        const abort = new AbortController();
        const response = await fetch(url, { headers: { accept, 'apollo-require-preflight': 'true' }, signal: abort.signal });
        const reader = response.body!.getReader();
        let text = '';
        while (!text.includes('dataTaskUpdated')) text += new TextDecoder().decode((await reader.read()).value);
        abort.abort();
        return { status: response.status, type: response.headers.get('content-type'), text };
      },
      { url: `/graphql${search()}`, accept: MULTIPART_ACCEPT },
    );
    expect(answer).toMatchObject({ status: 200, type: expect.stringMatching(/^multipart\/mixed/), text: expect.stringContaining(id) });
  });

  it.each([
    ['SSE', '/graphql/stream', 'text/event-stream', 403],
    // Refused by the CSRF prevention first: a no-cors request can send no preflight-forcing header.
    ['multipart', '/graphql', 'multipart/mixed;subscriptionSpec=1.0', 400],
  ])(
    'refuses the %s stream to a no-cors fetch of a page (which cannot read it, yet would hold it open), before it streams',
    async (_name, path, accept, status) => {
      const url = `${stack.gateway.url}${path}${search()}`;
      const answered = page.waitForResponse((response) => response.url() === url);
      // Accept is a header a no-cors request may carry; the answer is opaque to the page.
      await page.evaluate(({ url, accept }) => void fetch(url, { mode: 'no-cors', credentials: 'include', headers: { accept } }).catch(() => undefined), {
        url,
        accept,
      });
      const response = await answered;
      const sent = await response.request().allHeaders();
      expect([sent['sec-fetch-mode'], sent['sec-fetch-site'], sent.accept]).toEqual(['no-cors', 'same-origin', accept]);
      expect(response.status()).toBe(status);
      expect(response.headers()['content-type']).toMatch(/^application\/json/);
    },
  );
});
