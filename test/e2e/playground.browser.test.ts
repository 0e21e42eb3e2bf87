import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../helpers/chromium';
import { readFixtures, userNamed } from '../helpers/fixtures';
import { startStack, type Stack } from '../helpers/stack';

const ARTIFACTS = join(__dirname, '..', '..', 'test-artifacts');

/**
 * The playground in a real browser: served by the gateway under a strict CSP, signed in through the sandbox bank's
 * page, running a query whose answer shows in the result pane, and reaching the WebSocket with the session cookie.
 */
describe('the playground in Chromium', () => {
  let stack: Stack;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  const consoleProblems: string[] = [];

  beforeAll(async () => {
    const executablePath = ensureChromium();
    stack = await startStack();
    profile = mkdtempSync(join(tmpdir(), 'bankgraph-chromium-'));
    context = await chromium.launchPersistentContext(profile, { executablePath, args: CHROMIUM_ARGS, headless: true, viewport: { width: 1400, height: 900 } });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) consoleProblems.push(message.text());
    });
    page.on('pageerror', (error) => consoleProblems.push(`page error: ${error.message}`));
  }, 15 * 60_000);

  afterAll(async () => {
    await context?.close();
    await stack?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('signs in through the sandbox bank, runs a query and shows the accounts', async () => {
    // GraphiQL loads the schema first (its introspection query is exactly as deep as GRAPHQL_MAX_DEPTH allows).
    const introspection = page.waitForResponse((candidate) => candidate.request().postData()?.includes('IntrospectionQuery') ?? false);
    const response = await page.goto(`${stack.gateway.url}/graphql`);
    const schemaAnswer = await introspection;
    expect(schemaAnswer.status()).toBe(200);
    expect(((await schemaAnswer.json()) as { data?: { __schema?: unknown } }).data?.__schema).toBeDefined();
    expect(response?.status()).toBe(200);
    const csp = response!.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    await page.waitForSelector('.graphiql-container', { timeout: 20_000 });

    // Sign in: the link goes through /auth/login to the bank's page and comes back to the playground.
    await page.getByRole('link', { name: 'Sign in with the sandbox bank' }).click();
    await page.waitForSelector('input[name="password"]');
    await page.fill('input[name="username"]', 'john');
    await page.fill('input[name="password"]', 'doe');
    await Promise.all([page.waitForURL(`${stack.gateway.url}/graphql`), page.locator('form button[type="submit"], form input[type="submit"]').first().click()]);
    await page.waitForSelector('.graphiql-container');
    const cookies = await context.cookies(stack.gateway.url);
    expect(cookies.find((cookie) => cookie.name === 'bankgraph_session')).toMatchObject({ httpOnly: true, sameSite: 'Lax' });

    // Type the query into the editor, as a person would (insertText: no auto-closed brackets), and run it.
    const editor = page.locator('.graphiql-query-editor .CodeMirror').first();
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText('{ viewer { accounts { displayName balance { current } } } }');
    await page.locator('.graphiql-execute-button').click();

    const john = userNamed(await readFixtures(stack.sandbox.url), 'john');
    for (const account of john.accounts) {
      await page.locator('.graphiql-response', { hasText: account.account.display_name }).waitFor({ timeout: 15_000 });
    }
    const shown = JSON.parse(await page.locator('.graphiql-response .CodeMirror').first().evaluate((element) => (element as unknown as { CodeMirror: { getValue(): string } }).CodeMirror.getValue())) as {
      data: { viewer: { accounts: { displayName: string; balance: { current: string } }[] } };
    };
    expect(shown.data.viewer.accounts).toEqual(john.accounts.map((account) => ({ displayName: account.account.display_name, balance: { current: String(account.balance.current) } })));

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'playground.png'), fullPage: true });
  }, 60_000);

  it('reaches the WebSocket from the page with the session cookie, within the CSP', async () => {
    // The page's own graphql-ws bundle, on the page's origin: exactly what the playground's subscriptions use.
    const answer = await page.evaluate(
      () =>
        new Promise<unknown>((resolve, reject) => {
          const browser = globalThis as unknown as {
            location: { host: string };
            graphqlWs: { createClient(options: object): { subscribe(payload: object, sink: object): void; dispose(): void } };
          };
          const client = browser.graphqlWs.createClient({ url: `ws://${browser.location.host}/graphql`, retryAttempts: 0 });
          client.subscribe(
            { query: '{ viewer { accounts { displayName } } }' },
            { next: (value: unknown) => resolve(value), error: (error: unknown) => reject(new Error(JSON.stringify(error))), complete: () => client.dispose() },
          );
        }),
    );
    expect(answer).toMatchObject({ data: { viewer: { accounts: expect.arrayContaining([expect.objectContaining({ displayName: expect.any(String) })]) } } });
  });

  it('loaded everything from the gateway itself, with no CSP violation or script error', async () => {
    expect(consoleProblems).toEqual([]);
  });
});
