import type { Page } from 'playwright-core';
import { EXAMPLE_TABS } from '../../src/playground/examples';
import { launchChromium } from '../helpers/chromium';
import { readFixtures, userNamed } from '../helpers/fixtures';
import { injectFault } from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';

type Account = { id: string; displayName: string; balance?: { current: string } | null; transactions?: { nodes: unknown[] } };
type Pane = { data?: { viewer?: { accounts?: Account[] } }; errors?: unknown[] };
/** The response pane each time GraphiQL rewrote it, with the payload line as it read at that moment. */
type Seen = { text: string; note: string };

const DEFERRED = EXAMPLE_TABS.find((tab) => tab.query.includes('query AccountsDeferred('))!.query;

function parsed(text: string): Pane | undefined {
  try {
    return JSON.parse(text) as Pane;
  } catch {
    return undefined;
  }
}

/**
 * The AccountsDeferred tab against a bank whose balances are slow: the page must show the accounts alone first and
 * list the payloads as they arrive, then the merged answer, the same as the gateway gives in one piece.
 */
describe('a deferred query in the playground, in Chromium', () => {
  let stack: Stack;
  let page: Page;
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  const consoleProblems: string[] = [];

  beforeAll(async () => {
    stack = await startStack();
    browser = await launchChromium();
    ({ page } = browser);
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) consoleProblems.push(message.text());
    });
    page.on('pageerror', (error) => consoleProblems.push(`page error: ${error.message}`));
    await page.goto(`${stack.gateway.url}/graphql`);
    await page.waitForSelector('.graphiql-container', { timeout: 20_000 });
    await page.locator('#sign-in').click();
    await page.waitForSelector('input[name="password"]');
    await page.fill('input[name="username"]', 'john');
    await page.fill('input[name="password"]', 'doe');
    await Promise.all([page.waitForURL(`${stack.gateway.url}/graphql`), page.locator('form button[type="submit"], form input[type="submit"]').first().click()]);
    await page.locator('#who', { hasText: 'banks: mock' }).waitFor({ timeout: 15_000 });
  }, 15 * 60_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('ends a deferred answer at the stop button, and the payload line says so', async () => {
    // First, while nothing is in the data cache: a balance kept from an earlier query would come at once.
    await injectFault(stack, { match: 'GET /data/v1/accounts/*/balance', latencyMs: 10_000 });
    try {
      await page.locator('.graphiql-tab-button', { hasText: 'AccountsDeferred' }).click();
      const note = page.locator('#payload-note');
      await page.locator('.graphiql-execute-button').click();
      await note.filter({ hasText: 'payload 1 (initial)' }).filter({ hasText: 'waiting for more…' }).waitFor({ timeout: 20_000 });
      // While an operation runs, GraphiQL's execute button is its stop button.
      await page.locator('.graphiql-execute-button').click();
      await note.filter({ hasText: '· stopped' }).waitFor({ timeout: 10_000 });
      expect(await note.textContent()).not.toContain('balance');
      expect(consoleProblems).toEqual([]);
    } finally {
      await stack.sandboxJson('DELETE', '/sandbox/faults');
    }
  }, 60_000);

  it('shows the accounts first, lists each payload as it arrives, then the merged result with balances', async () => {
    const john = userNamed(await readFixtures(stack.sandbox.url), 'john');
    await injectFault(stack, { match: 'GET /data/v1/accounts/*/balance', latencyMs: 400 });

    await page.locator('.graphiql-tab-button', { hasText: 'AccountsDeferred' }).click();
    await page.locator('.graphiql-tab-active .graphiql-tab-button', { hasText: 'AccountsDeferred' }).waitFor();
    // Every rewrite of the response pane is recorded in the page, so no intermediate state can slip between polls.
    await page
      .locator('.graphiql-response .CodeMirror')
      .first()
      .evaluate((element) => {
        type Editor = { getValue(): string; on(event: 'change', listener: () => void): void };
        const editor = (element as unknown as { CodeMirror: Editor }).CodeMirror;
        const scope = globalThis as unknown as { seen: Seen[]; document: { getElementById(id: string): { textContent: string | null } | null } };
        scope.seen = [];
        editor.on('change', () => scope.seen.push({ text: editor.getValue(), note: scope.document.getElementById('payload-note')?.textContent ?? '' }));
      });

    const answered = page.waitForResponse((candidate) => candidate.request().postData()?.includes('query AccountsDeferred(') ?? false);
    await page.locator('.graphiql-execute-button').click();
    const answer = await answered;
    expect(answer.request().headers()['accept']).toBe('multipart/mixed;deferSpec=20220824, application/graphql-response+json, application/json');
    expect(answer.headers()['content-type']).toBe('multipart/mixed;boundary="graphql";deferSpec=20220824');
    const note = page.locator('#payload-note');
    await note.filter({ hasText: '· done' }).waitFor({ timeout: 20_000 });

    const seen = await page.evaluate(() => (globalThis as unknown as { seen: Seen[] }).seen);
    const panes = seen.map((entry) => ({ ...entry, pane: parsed(entry.text) }));
    const accountsOf = (pane: Pane | undefined): Account[] => pane?.data?.viewer?.accounts ?? [];
    const initial = panes.findIndex(({ pane }) => accountsOf(pane).length > 0 && accountsOf(pane).every((account) => !('balance' in account)));
    const merged = panes.findIndex(({ pane }) => accountsOf(pane).length > 0 && accountsOf(pane).every((account) => account.balance && account.transactions));
    expect(initial).toBeGreaterThanOrEqual(0);
    expect(merged).toBeGreaterThan(initial);
    // While the pane held the accounts alone, the line had listed the first payload and not yet the balances.
    expect(panes[initial]!.note).toMatch(/^Incremental delivery: payload 1 \(initial\) at \d+ ms/);
    expect(panes[initial]!.note).not.toContain('(balance)');
    expect(accountsOf(panes[initial]!.pane).map((account) => account.displayName)).toEqual(john.accounts.map((account) => account.account.display_name));

    const line = (await note.textContent()) ?? '';
    const initialAt = Number(/payload 1 \(initial\) at (\d+) ms/.exec(line)?.[1]);
    const balance = /payload (\d+) \([^)]*\bbalance\b[^)]*\) at (\d+) ms/.exec(line);
    expect(balance).not.toBeNull();
    expect(Number(balance![1])).toBeGreaterThan(1);
    expect(Number(balance![2])).toBeGreaterThanOrEqual(initialAt);
    expect(line).toMatch(/ · done$/);

    // The merged pane is the answer the gateway gives in one piece to a client that does not accept multipart.
    const whole = await stack.graphql(DEFERRED, {}, await stack.signIn('john', 'doe'));
    expect(whole.errors).toBeUndefined();
    expect(parsed(seen.at(-1)!.text)).toEqual({ data: whole.data });
    expect(consoleProblems).toEqual([]);
  }, 60_000);
});
