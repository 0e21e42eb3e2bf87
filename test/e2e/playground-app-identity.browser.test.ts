import type { Page } from 'playwright-core';
import { launchChromium } from '../helpers/chromium';
import { readFixtures, userNamed } from '../helpers/fixtures';
import { startTestIdp, type TestIdp } from '../helpers/jwks-server';
import { startStack, type Stack } from '../helpers/stack';

/**
 * The playground in app identity (AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE): the access token goes into a field of
 * the page, "Connect" links the sandbox bank to that user, and queries run with the token.
 */
describe('the playground in Chromium, with app identity', () => {
  let idp: TestIdp;
  let stack: Stack;
  let page: Page;
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  const consoleProblems: string[] = [];

  beforeAll(async () => {
    idp = await startTestIdp();
    stack = await startStack({ env: { AUTH_JWKS_URL: idp.jwksUrl, AUTH_ISSUER: idp.issuer, AUTH_AUDIENCE: 'bankgraph-api' } });
    browser = await launchChromium();
    ({ page } = browser);
    page.on('console', (message) => {
      // The first introspection runs before a token is typed: its 200 answer carries UNAUTHENTICATED for nothing.
      if (/Content Security Policy/i.test(message.text())) consoleProblems.push(message.text());
    });
    page.on('pageerror', (error) => consoleProblems.push(`page error: ${error.message}`));
  }, 15 * 60_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await idp?.close();
  });

  it('says what authenticates its requests: the app’s access token, no session cookie and no bank sign-in', async () => {
    await page.goto(`${stack.gateway.url}/graphql`);
    await page.waitForSelector('.graphiql-container', { timeout: 20_000 });
    expect(await page.locator('#identity-mode').textContent()).toBe(
      "App identity: every request carries your app's access token; Connect adds the sandbox bank to its user.",
    );
    expect(await page.locator('a[href^="/auth/login"]').count()).toBe(0);
    const editor = page.locator('.graphiql-query-editor .CodeMirror').first();
    const firstTab = await editor.evaluate((element) => (element as unknown as { CodeMirror: { getValue(): string } }).CodeMirror.getValue());
    expect(firstTab).toContain('Paste your app\'s access token into "Access token" above');
    expect(firstTab).toContain('POST /auth/connections');
    expect(firstTab).not.toMatch(/session cookie|Sign in/);

    // Run with no token typed: the answer says to send the access token, not to sign in.
    await page.locator('.graphiql-execute-button').click();
    const answer = page.locator('.graphiql-response', { hasText: 'UNAUTHENTICATED' });
    await answer.waitFor({ timeout: 15_000 });
    const text = (await answer.textContent()) ?? '';
    expect(text).toContain('Authorization: Bearer <access token>');
    expect(text).not.toContain('/auth/login');
  }, 60_000);

  it('takes the access token in a field, connects the bank for that user and runs a query with it', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = idp.sign({ iss: idp.issuer, aud: 'bankgraph-api', sub: 'playground-user', iat: now, exp: now + 600 });
    await page.goto(`${stack.gateway.url}/graphql`);
    await page.waitForSelector('.graphiql-container', { timeout: 20_000 });
    expect(await page.locator('#sign-in').count()).toBe(0);
    await page.fill('#access-token', token);

    await page.getByRole('button', { name: 'Connect the sandbox bank' }).click();
    await page.waitForSelector('input[name="password"]');
    await page.fill('input[name="username"]', 'john');
    await page.fill('input[name="password"]', 'doe');
    await Promise.all([page.waitForURL(`${stack.gateway.url}/graphql`), page.locator('form button[type="submit"]').first().click()]);
    await page.waitForSelector('.graphiql-container');
    expect(await page.inputValue('#access-token')).toBe(token);

    const editor = page.locator('.graphiql-query-editor .CodeMirror').first();
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText('{ viewer { accounts { displayName connection { providerId } } } }');
    await page.locator('.graphiql-execute-button').click();
    const john = userNamed(await readFixtures(stack.sandbox.url), 'john');
    for (const account of john.accounts) {
      await page.locator('.graphiql-response', { hasText: account.account.display_name }).waitFor({ timeout: 15_000 });
    }
    expect(consoleProblems).toEqual([]);
  }, 60_000);
});
