import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium } from '../helpers/chromium';
import { advanceSandboxClock, fixtures, paymentsIn } from '../helpers/money';
import { freePort } from '../helpers/ports';
import { MERCHANT_KEY, startStack, type Stack } from '../helpers/stack';
import { buildWebApp, serveWebApp, type ServedApp } from '../helpers/web-app';

const ARTIFACTS = join(__dirname, '..', '..', 'test-artifacts');
const PAGE_SIZE = 5;

type Browser = Awaited<ReturnType<typeof launchChromium>>;

const GRAPH = /* GraphQL */ `
  query {
    viewer {
      accounts {
        accountId
        displayName
        balance {
          available
          currency
        }
        transactions(first: 10) {
          edges {
            node {
              description
            }
          }
        }
      }
    }
  }
`;

interface Graph {
  viewer: {
    accounts: {
      accountId: string;
      displayName: string;
      balance: { available: string; currency: string } | null;
      transactions: { edges: { node: { description: string } }[] };
    }[];
  };
}

/**
 * examples/web, built as a developer builds it and served on its own origin (http://localhost:<port>), driven in
 * Chromium against a gateway on http://localhost:<another port> that lists that origin in CORS_ORIGINS. Each check
 * reads the text a person would see. Sandbox time stands still (scale 1/1000) and moves when a test says.
 */
describe('the reference web app (examples/web) in Chromium', () => {
  let stack: Stack;
  let app: ServedApp;
  let stranger: ServedApp;
  let gatewayUrl: string;
  const browsers: Browser[] = [];

  beforeAll(async () => {
    const dist = await buildWebApp();
    app = await serveWebApp(dist);
    // The same app on another origin of the same site (so the browser sends it the session cookie), one the gateway does not list.
    stranger = await serveWebApp(dist);
    const port = await freePort();
    gatewayUrl = `http://localhost:${port}`;
    stack = await startStack({
      env: { PORT: String(port), PUBLIC_URL: gatewayUrl, CORS_ORIGINS: app.origin, PERSISTED_DOCUMENTS: 'allow', SANDBOX_TIME_SCALE: '0.001' },
    });
  }, 10 * 60_000);

  afterAll(async () => {
    // Every one closed, whichever fails to.
    const closed = await Promise.allSettled([...browsers.map((browser) => browser.close()), stack?.close(), app?.close(), stranger?.close()]);
    const failed = closed.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  });

  async function openBrowser(): Promise<Page> {
    const browser = await launchChromium();
    browsers.push(browser);
    return browser.page;
  }

  /** Runs a test's steps; on failure keeps a screenshot of what the page showed, named after the test. */
  async function onPage(page: Page, name: string, steps: () => Promise<void>): Promise<void> {
    try {
      await steps();
    } catch (error) {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, `web-app-${name}.png`), fullPage: true }).catch(() => undefined);
      throw error;
    }
  }

  function openApp(page: Page, origin = app.origin): Promise<unknown> {
    return page.goto(`${origin}/?gateway=${encodeURIComponent(gatewayUrl)}`);
  }

  async function expected(): Promise<Graph> {
    const token = await stack.signIn('john', 'doe');
    const answer = await stack.graphql<Graph>(GRAPH, {}, token);
    expect(answer.errors).toBeUndefined();
    return answer.data!;
  }

  async function seesAccountsAndPages(page: Page): Promise<void> {
    const graph = await expected();
    expect(graph.viewer.accounts.length).toBeGreaterThan(0);
    for (const account of graph.viewer.accounts) {
      const card = page.getByRole('article', { name: account.displayName });
      await card.getByRole('heading', { name: account.displayName }).waitFor();
      await card.getByText(`Balance: ${account.balance!.available} ${account.balance!.currency} available`).waitFor();
    }
    const first = graph.viewer.accounts.find((account) => account.transactions.edges.length > PAGE_SIZE)!;
    const card = page.getByRole('article', { name: first.displayName });
    const items = card.getByRole('list', { name: 'Transactions' }).getByRole('listitem');
    await items.nth(PAGE_SIZE - 1).waitFor();
    expect(await items.count()).toBe(PAGE_SIZE);
    await card.getByRole('button', { name: 'More' }).click();
    await items.nth(2 * PAGE_SIZE - 1).waitFor();
    const shown = await items.allTextContents();
    expect(shown).toHaveLength(2 * PAGE_SIZE);
    expect(shown.map((text) => text.split(' · ')[1])).toEqual(first.transactions.edges.map((edge) => edge.node.description));
  }

  async function paysOutAndFollows(page: Page): Promise<void> {
    await page.getByLabel('Payee name').fill('John Doe');
    await page.getByRole('button', { name: 'Verify payee' }).click();
    await page.getByText('Verified: John Doe').waitFor();
    await page.getByLabel('Amount (GBP)').fill('2.50');
    await page.getByRole('button', { name: 'Pay out' }).click();
    const status = page.getByText(/^Payout of 2\.50 GBP to John Doe:/);
    await status.getByText('AUTHORISED', { exact: true }).waitFor();
    await advanceSandboxClock(stack, 5);
    await status.getByText('SUBMITTED', { exact: true }).waitFor({ timeout: 15_000 });
    await advanceSandboxClock(stack, 30);
    await status.getByText('SETTLED', { exact: true }).waitFor({ timeout: 15_000 });
  }

  /** What the page's own WebSocket gets from the gateway: its first message, or how it closed. */
  function tryWebSocket(page: Page): Promise<string> {
    return page.evaluate(
      (url) =>
        new Promise<string>((resolve) => {
          const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
          socket.onopen = () => socket.send(JSON.stringify({ type: 'connection_init' }));
          socket.onmessage = (event) => {
            resolve(`message ${String(event.data)}`);
            socket.close();
          };
          socket.onclose = (event) => resolve(`closed ${event.code} ${event.reason}`);
        }),
      gatewayUrl,
    );
  }

  /** Whether the page's own EventSource, sending the site's cookies, gets a stream from /graphql/stream. */
  function tryStream(page: Page): Promise<string> {
    return page.evaluate(
      (url) =>
        new Promise<string>((resolve) => {
          const query = encodeURIComponent('subscription { dataTaskUpdated(id: "none") { status } }');
          const source = new EventSource(`${url}/graphql/stream?query=${query}`, { withCredentials: true });
          source.onopen = () => {
            source.close();
            resolve('open');
          };
          source.onerror = () => {
            source.close();
            resolve('error');
          };
        }),
      gatewayUrl,
    );
  }

  /** The sandbox bank's form, as a person fills it in, and the way back to the app. */
  async function signInAtBank(page: Page): Promise<void> {
    await page.waitForSelector('input[name="password"]');
    await page.fill('input[name="username"]', 'john');
    await page.fill('input[name="password"]', 'doe');
    await Promise.all([
      page.waitForURL((url) => url.origin === app.origin),
      page.locator('form button[type="submit"], form input[type="submit"]').first().click(),
    ]);
  }

  let cookiePage: Page;

  it('signs in with the bank and lands back in the app, with the session cookie; shows the accounts, pages them, pays out and follows it live', async () => {
    const page = (cookiePage = await openBrowser());
    await onPage(page, 'cookie', async () => {
      await openApp(page);
      await page.getByText('You are not signed in.').waitFor();
      await page.getByRole('link', { name: 'Sign in with the bank' }).click();
      await signInAtBank(page);
      expect(new URL(page.url()).searchParams.get('gateway')).toBe(gatewayUrl);
      await page.getByText('Signed in with the session cookie.').waitFor();

      await seesAccountsAndPages(page);
      await paysOutAndFollows(page);
    });
  }, 90_000);

  it('refunds a payment with the merchant key and follows the refund until it executes', async () => {
    const page = cookiePage;
    const [payment] = paymentsIn(await fixtures(stack), 'settled', 1);
    await onPage(page, 'refund', async () => {
      await page.getByLabel('Merchant key').fill(MERCHANT_KEY);
      await page.getByRole('button', { name: 'Use merchant key' }).click();
      await page.getByLabel('Payment id').fill(payment!.id);
      await page.getByLabel('Amount (empty: the whole payment)').fill('1.00');
      await page.getByRole('button', { name: 'Refund', exact: true }).click();
      const status = page.getByText(/^Refund of 1\.00 /);
      await status.getByText(/^(PENDING|AUTHORIZED)$/).waitFor();
      await advanceSandboxClock(stack, 61);
      await status.getByText('EXECUTED', { exact: true }).waitFor({ timeout: 15_000 });
    });
  }, 60_000);

  it('starts a data task and shows its result once it succeeds', async () => {
    const page = cookiePage;
    const graph = await expected();
    await onPage(page, 'data-task', async () => {
      await page.getByRole('button', { name: 'Start data task' }).click();
      const status = page.getByText(/^Data task:/);
      await status.getByText(/^(QUEUED|RUNNING)$/).waitFor();
      await advanceSandboxClock(stack, 1);
      await status.getByText('SUCCEEDED', { exact: true }).waitFor({ timeout: 15_000 });
      const results = page.getByRole('list', { name: 'Task results' }).getByRole('listitem');
      expect(await results.allTextContents()).toEqual(graph.viewer.accounts.map((account) => account.displayName));
    });
  }, 60_000);

  let bearerPage: Page;

  it('works over a bearer session too: the JSON sign-in lands back in the app with a token, the accounts and their pages, a payout followed live', async () => {
    const page = (bearerPage = await openBrowser());
    await onPage(page, 'bearer', async () => {
      await openApp(page);
      await page.getByText('You are not signed in.').waitFor();
      await page.getByRole('button', { name: 'Sign in with the bank, keep a token' }).click();
      await signInAtBank(page);
      await page.getByText('Signed in with a bearer token.').waitFor();
      // The bank's code has left the address bar; the gateway setting is kept.
      expect([...new URL(page.url()).searchParams.keys()]).toEqual(['gateway']);
      await seesAccountsAndPages(page);
      await paysOutAndFollows(page);
    });
  }, 90_000);

  it('signs out of the bearer session, and a pasted session token signs in again', async () => {
    const page = bearerPage;
    const token = await stack.signIn('john', 'doe');
    await onPage(page, 'pasted-token', async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByText('You are not signed in.').waitFor();
      await page.getByLabel('Session token').fill(token);
      await page.getByRole('button', { name: 'Use token' }).click();
      await page.getByText('Signed in with a bearer token.').waitFor();
      await page.getByRole('heading', { name: 'Your accounts' }).waitFor();
    });
  }, 60_000);

  it('is refused from an origin the gateway does not list, on HTTP, WebSocket and SSE, with the session cookie at hand', async () => {
    // The signed-in browser: its session cookie is for localhost, the same site as the unlisted origin.
    const page = await cookiePage.context().newPage();
    await onPage(page, 'unlisted-origin', async () => {
      await openApp(page, stranger.origin);
      await page.getByText('The gateway could not be reached: Failed to fetch').waitFor();
      await expect(page.getByText('Signed in with the session cookie.').count()).resolves.toBe(0);

      // The listed origin, in the same browser, is let in on both (so the refusals below are the origin's doing).
      await expect(tryWebSocket(cookiePage)).resolves.toMatch(/^message \{"type":"connection_ack"/);
      await expect(tryStream(cookiePage)).resolves.toBe('open');
      await expect(tryWebSocket(page)).resolves.toMatch(/^closed /);
      await expect(tryStream(page)).resolves.toBe('error');
    });
  }, 60_000);

  it('signs out of the cookie session: the gateway forgets it, so a reload stays signed out', async () => {
    const page = cookiePage;
    await onPage(page, 'cookie-sign-out', async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByText('You are not signed in.').waitFor();
      await page.reload();
      await page.getByText('You are not signed in.').waitFor();
    });
  }, 60_000);
});
