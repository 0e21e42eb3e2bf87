import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { paymentId } from '../../src/sandbox/fixtures/payments';
import { launchChromium } from '../helpers/chromium';
import { readFixtures, userNamed } from '../helpers/fixtures';
import { freePort } from '../helpers/ports';
import { MERCHANT_KEY, startStack, type Stack } from '../helpers/stack';

const ARTIFACTS = join(__dirname, '..', '..', 'test-artifacts');
const EXAMPLE_TITLES = ['ViewerGraph', 'VerifyAccountHolder', 'PayoutUpdated', 'Payment', 'StartDataTask', 'AccountsDeferred'];

type Answer = { data?: Record<string, any> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };

/**
 * The playground in a real browser, as a new user meets it: served by the gateway under a strict CSP, signed out
 * and then signed in through the sandbox bank's page, every example tab run (a subscription among them), and a
 * reload. No step may log a CSP violation or a console error.
 */
describe('the playground in Chromium', () => {
  let stack: Stack;
  let context: BrowserContext;
  let page: Page;
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  const consoleProblems: string[] = [];

  beforeAll(async () => {
    stack = await startStack();
    browser = await launchChromium();
    ({ context, page } = browser);
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) consoleProblems.push(message.text());
    });
    page.on('pageerror', (error) => consoleProblems.push(`page error: ${error.message}`));
    // What a failed request was about, next to the console's bare "Failed to load resource".
    page.on('response', async (answer) => {
      if (answer.status() >= 400) consoleProblems.push(`HTTP ${answer.status()} ${answer.url()}: ${(await answer.text().catch(() => '')).slice(0, 300)}`);
    });
  }, 15 * 60_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  /** Replaces a CodeMirror editor's text through its API (the query editor or the variables editor). */
  async function setEditor(which: 'query' | 'variables', text: string): Promise<void> {
    const selector =
      which === 'query' ? '.graphiql-query-editor .CodeMirror' : '.graphiql-editor-tool[aria-label="Variables"] .graphiql-editor:not(.hidden) .CodeMirror';
    await page
      .locator(selector)
      .first()
      .evaluate((element, value) => (element as unknown as { CodeMirror: { setValue(v: string): void } }).CodeMirror.setValue(value), text);
  }

  async function response(): Promise<string> {
    return page
      .locator('.graphiql-response .CodeMirror')
      .first()
      .evaluate((element) => (element as unknown as { CodeMirror: { getValue(): string } }).CodeMirror.getValue());
  }

  /** Runs the active tab's operation (picking `operation` from the menu when the tab holds several) and waits for an answer that `done` accepts. */
  async function run(
    operation: string,
    done: (answer: Answer) => boolean = () => true,
    several = operation !== 'ViewerGraph' && operation !== 'PayoutUpdated',
  ): Promise<Answer> {
    // Emptied first, so the answer read below is this run's and not the previous one.
    await page
      .locator('.graphiql-response .CodeMirror')
      .first()
      .evaluate((element) => (element as unknown as { CodeMirror: { setValue(v: string): void } }).CodeMirror.setValue(''));
    // The cursor on the comment at the top is in no operation: GraphiQL then runs a lone operation at once and
    // asks which one to run when there are several (the picker whose styles the CSP nonce admits).
    await page
      .locator('.graphiql-query-editor .CodeMirror')
      .first()
      .evaluate((element) => {
        const editor = (element as unknown as { CodeMirror: { focus(): void; setCursor(line: number, ch: number): void } }).CodeMirror;
        editor.focus();
        editor.setCursor(0, 0);
      });
    await page.locator('.graphiql-execute-button').click();
    const picker = page.getByRole('menuitem', { name: operation, exact: true });
    if (several) await picker.click({ timeout: 5_000 });
    let answer: Answer | undefined;
    let text = '';
    for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
      text = await response();
      if (text.trim().startsWith('{')) {
        try {
          const parsed = JSON.parse(text) as Answer;
          if (done(parsed)) return parsed;
          answer = parsed;
        } catch {
          // A subscription's pane can be mid-update; read it again.
        }
      }
      await page.waitForTimeout(100);
    }
    throw new Error(`no accepted answer from ${operation}; last seen: ${JSON.stringify(answer)}; the pane: ${text.slice(0, 500)}`);
  }

  async function openTab(title: string): Promise<void> {
    await page.locator('.graphiql-tab-button', { hasText: title }).first().click();
    await page.locator('.graphiql-tab-active .graphiql-tab-button', { hasText: title }).waitFor();
    // GraphiQL reads the new tab's operations from its editor 100 ms after the switch (debounced); executing before
    // that runs the previous tab's operation name against this tab's document.
    await page.waitForFunction((name) => {
      type Editor = { CodeMirror?: { operations?: { name?: { value: string } }[] } };
      const editor = (globalThis as unknown as { document: { querySelector(selector: string): Editor | null } }).document.querySelector(
        '.graphiql-query-editor .CodeMirror',
      );
      return (editor?.CodeMirror?.operations ?? []).some((operation) => operation.name?.value === name);
    }, title);
  }

  it('opens signed out: says so, offers only Sign in, and a query run signed out is told to sign in', async () => {
    const introspection = page.waitForResponse((candidate) => candidate.request().postData()?.includes('IntrospectionQuery') ?? false);
    const opened = await page.goto(`${stack.gateway.url}/graphql`);
    expect(opened?.status()).toBe(200);
    expect((await introspection).status()).toBe(200);
    const csp = opened!.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self';");
    expect(csp).toMatch(/style-src 'self' 'nonce-[A-Za-z0-9+/=]{24}';/);
    expect(csp).not.toContain('unsafe-inline');
    await page.waitForSelector('.graphiql-container', { timeout: 20_000 });

    await expect(page.locator('#who').textContent()).resolves.toBe('Not signed in.');
    expect(await page.locator('#sign-in').isVisible()).toBe(true);
    expect(await page.locator('#sign-out').isVisible()).toBe(false);
    expect(await page.locator('.graphiql-tab-button').allTextContents()).toEqual(EXAMPLE_TITLES);

    const answer = await run('ViewerGraph');
    expect(answer.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(answer.errors?.[0]?.message).toContain('In a browser: use "Sign in"');
  }, 60_000);

  it('signs in through the sandbox bank; the banner shows the user and their bank, and only Sign out', async () => {
    await page.locator('#sign-in').click();
    await page.waitForSelector('input[name="password"]');
    await page.fill('input[name="username"]', 'john');
    await page.fill('input[name="password"]', 'doe');
    await Promise.all([page.waitForURL(`${stack.gateway.url}/graphql`), page.locator('form button[type="submit"], form input[type="submit"]').first().click()]);
    await page.waitForSelector('.graphiql-container');
    await page.locator('#who', { hasText: 'banks: mock' }).waitFor({ timeout: 15_000 });
    // The holder's name as the bank gives it, not the opaque user id (which only the tooltip carries).
    expect(await page.locator('#who').textContent()).toBe('Signed in as John Doe · banks: mock');
    expect(await page.locator('#who').getAttribute('title')).toMatch(/^user id user_[\w-]+$/);
    expect(await page.locator('#sign-in').isVisible()).toBe(false);
    expect(await page.locator('#sign-out').isVisible()).toBe(true);
    const cookies = await context.cookies(stack.gateway.url);
    expect(cookies.find((cookie) => cookie.name === 'bankgraph_session')).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
  }, 60_000);

  it('runs the Payment tab as it stands, on the payment the sandbox seeded, and refunds it afresh on each run', async () => {
    const seeded = (await readFixtures(stack.sandbox.url)).payments.find((payment) => payment.status === 'settled')!.id;
    await page.fill('#merchant-key', MERCHANT_KEY);
    await openTab('Payment');
    const payment = await run('Payment');
    expect(payment.errors).toBeUndefined();
    expect(payment.data!.payment.paymentId).toBe(seeded);
    const first = await run('RefundPayment', (answer) => answer.data?.refundPayment !== undefined || answer.errors !== undefined);
    expect(first.errors).toBeUndefined();
    const second = await run('RefundPayment', (answer) => answer.data?.refundPayment !== undefined || answer.errors !== undefined);
    expect(second.errors).toBeUndefined();
    expect(second.data!.refundPayment.id).not.toBe(first.data!.refundPayment.id);
    expect((second as { extensions?: Record<string, unknown> }).extensions).toBeUndefined();
    await page.locator('#run-note', { hasText: 'a new refund.' }).waitFor();
    await page.fill('#merchant-key', '');
    // Back on the first tab, as the tour of the tabs below starts, so the tab state GraphiQL stores moves on from here.
    await openTab('ViewerGraph');
    await page.waitForFunction(() => {
      const stored = (globalThis as unknown as { localStorage: { getItem(key: string): string | null } }).localStorage.getItem('graphiql:tabState');
      return stored !== null && (JSON.parse(stored) as { activeTabIndex: number }).activeTabIndex === 0;
    });
  }, 120_000);

  it('runs every example tab: the viewer, verification and a payout, its subscription, a merchant read, a data task and its subscription, a deferred query', async () => {
    const john = userNamed(await readFixtures(stack.sandbox.url), 'john');

    await openTab('ViewerGraph');
    const viewer = await run('ViewerGraph');
    expect(viewer.errors).toBeUndefined();
    expect(viewer.data!.viewer.accounts.map((account: { displayName: string }) => account.displayName)).toEqual(
      john.accounts.map((account) => account.account.display_name),
    );

    await openTab('VerifyAccountHolder');
    const verified = await run('VerifyAccountHolder');
    expect(verified.errors).toBeUndefined();
    expect(verified.data!.verifyAccountHolder.verified).toBe(true);
    const iban = verified.data!.verifyAccountHolder.report.find((entry: { verifiable: boolean }) => entry.verifiable).iban as string;
    await setEditor(
      'variables',
      JSON.stringify({
        input: { amountInMinor: 100, currency: 'GBP', beneficiaryIban: iban, beneficiaryName: 'John Doe', beneficiaryReference: 'playground payout' },
      }),
    );
    const payout = await run('CreatePayout');
    expect(payout.errors).toBeUndefined();
    const transactionId = payout.data!.createPayout.transactionId as string;

    // The subscription runs over the page's WebSocket with the session cookie; settling the payout pushes updates.
    await openTab('PayoutUpdated');
    await setEditor('variables', JSON.stringify({ transactionId }));
    const update = await run('PayoutUpdated', (answer) => answer.data?.payoutUpdated?.transactionId === transactionId || answer.errors !== undefined);
    expect(update.errors).toBeUndefined();
    expect(update.data!.payoutUpdated.state).toMatch(/^(AUTHORISED|SUBMITTED|SETTLED)$/);

    // The merchant key field sets the Authorization header for merchant operations.
    await page.fill('#merchant-key', MERCHANT_KEY);
    await openTab('Payment');
    const id = paymentId('settled-gbp-1');
    await setEditor('variables', JSON.stringify({ id }));
    const payment = await run('Payment');
    expect(payment.errors).toBeUndefined();
    expect(payment.data!.payment.paymentId).toBe(id);
    await page.fill('#merchant-key', '');

    await openTab('StartDataTask');
    const started = await run('StartDataTask');
    expect(started.errors).toBeUndefined();
    const taskId = started.data!.startDataTask.id as string;
    await setEditor('variables', JSON.stringify({ id: taskId }));
    const finished = await run(
      'DataTaskUpdated',
      (answer) => answer.data?.dataTaskUpdated?.status !== undefined && answer.data.dataTaskUpdated.status !== 'PENDING',
    );
    expect(finished.errors).toBeUndefined();
    expect(finished.data!.dataTaskUpdated.id).toBe(taskId);

    // Its payloads arrive over multipart HTTP and are merged in the pane (playground-defer.browser.test.ts shows the steps).
    await openTab('AccountsDeferred');
    const deferred = await run(
      'AccountsDeferred',
      (answer) => {
        const accounts: { balance?: unknown }[] = answer.data?.viewer?.accounts ?? [];
        return answer.errors !== undefined || (accounts.length > 0 && accounts.every((account) => account.balance !== undefined));
      },
      false,
    );
    expect(deferred.errors).toBeUndefined();
    expect(deferred.data!.viewer.accounts.map((account: { displayName: string }) => account.displayName)).toEqual(
      john.accounts.map((account) => account.account.display_name),
    );
    await page.locator('#payload-note', { hasText: '· done' }).waitFor();

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'playground.png'), fullPage: true });
  }, 120_000);

  it('keeps one copy of each tab when reloaded with the Payment tab open', async () => {
    await openTab('Payment');
    // GraphiQL writes its tabs to localStorage a moment after a change: reload once it has (as a person's reload would).
    await page.waitForFunction(() => {
      const stored = (globalThis as unknown as { localStorage: { getItem(key: string): string | null } }).localStorage.getItem('graphiql:tabState');
      return stored !== null && (JSON.parse(stored) as { activeTabIndex: number }).activeTabIndex === 3;
    });
    await page.reload();
    await page.waitForSelector('.graphiql-container');
    await page.locator('#who', { hasText: 'Signed in as' }).waitFor();
    // One tab per example still. GraphiQL names a tab after its selected operation: the one last run in it
    // (CreatePayout, DataTaskUpdated), or, in the Payment example just switched to, whichever of its two operations
    // GraphiQL picked by position from the tab before.
    const titles = await page.locator('.graphiql-tab-button').allTextContents();
    expect(titles).toEqual([
      'ViewerGraph',
      'CreatePayout',
      'PayoutUpdated',
      expect.stringMatching(/^(Payment|RefundPayment)$/),
      'DataTaskUpdated',
      'AccountsDeferred',
    ]);
    const activeIndex = await page
      .locator('.graphiql-tab-button')
      .evaluateAll((buttons) => buttons.findIndex((button) => button.closest('.graphiql-tab-active') !== null));
    expect(activeIndex).toBe(3);
  }, 60_000);

  it('makes a new payout each time the payout tab is run, and says when an answer is an earlier payout replayed', async () => {
    // The second tab, by place: GraphiQL retitles a tab after whichever of its operations it selects.
    await page.locator('.graphiql-tab-button').nth(1).click();
    await page.waitForFunction(() => {
      type Editor = { CodeMirror?: { operations?: { name?: { value: string } }[] } };
      const editor = (globalThis as unknown as { document: { querySelector(selector: string): Editor | null } }).document.querySelector(
        '.graphiql-query-editor .CodeMirror',
      );
      return (editor?.CodeMirror?.operations ?? []).some((operation) => operation.name?.value === 'CreatePayout');
    });
    await setEditor('variables', JSON.stringify({ name: 'John Doe' }));
    const verified = await run('VerifyAccountHolder');
    const iban = verified.data!.verifyAccountHolder.report.find((entry: { verifiable: boolean }) => entry.verifiable).iban as string;
    const input = { amountInMinor: 100, currency: 'GBP', beneficiaryIban: iban, beneficiaryName: 'John Doe', beneficiaryReference: 'playground payout' };
    await setEditor('variables', JSON.stringify({ name: 'John Doe', input }));
    const runNote = page.locator('#run-note');

    const first = await run('CreatePayout');
    expect(first.errors).toBeUndefined();
    const firstId = first.data!.createPayout.transactionId as string;
    await runNote.filter({ hasText: firstId }).waitFor();
    expect(await runNote.textContent()).toBe(`Sent with a fresh transactionId ${firstId}: a new payout.`);
    const second = await run('CreatePayout');
    expect(second.errors).toBeUndefined();
    const secondId = second.data!.createPayout.transactionId as string;
    expect(secondId).not.toBe(firstId);
    await runNote.filter({ hasText: secondId }).waitFor();

    // A transactionId written into the variables is kept: its second run answers the first payout, and says so.
    const chosen = firstId;
    await setEditor('variables', JSON.stringify({ name: 'John Doe', input: { ...input, transactionId: chosen } }));
    const replayed = await run('CreatePayout', (answer) => answer.data?.createPayout !== undefined || answer.errors !== undefined);
    expect(replayed.errors).toBeUndefined();
    expect(replayed.data!.createPayout.transactionId).toBe(chosen);
    expect((replayed as { extensions?: Record<string, unknown> }).extensions).toEqual({ idempotentReplay: true });
    await runNote.filter({ hasText: 'Idempotent replay' }).waitFor();
    expect(await runNote.textContent()).toBe(`Idempotent replay: this is the earlier payout made under transactionId ${chosen}; nothing new was made.`);
    expect(await runNote.getAttribute('data-replay')).toBe('true');
  }, 120_000);

  it('signs out with the one button, and the banner says so', async () => {
    await Promise.all([page.waitForEvent('load'), page.locator('#sign-out').click()]);
    await page.locator('#who', { hasText: 'Not signed in.' }).waitFor();
    expect(await page.locator('#sign-in').isVisible()).toBe(true);
    expect(await page.locator('#sign-out').isVisible()).toBe(false);
  }, 60_000);

  it('loaded everything from the gateway itself, with no CSP violation or console error at any step', () => {
    expect(consoleProblems).toEqual([]);
  });
});

/**
 * A fresh gateway as `PORT=<port> npm start` runs it (PUBLIC_URL unset, so http://localhost:<port>), opened at
 * http://127.0.0.1:<port> and at http://localhost:<port>. Chromium keeps cookies per name: each sign-in must come
 * back to the name it started on, and leave the browser there.
 */
describe('signing in from either loopback name, in Chromium', () => {
  let stack: Stack;
  let port: number;
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  const failures: string[] = [];

  beforeAll(async () => {
    port = await freePort();
    stack = await startStack({ env: { PORT: String(port) } });
    browser = await launchChromium();
    browser.page.on('response', async (answer) => {
      if (answer.status() >= 400) failures.push(`HTTP ${answer.status()} ${answer.url()}: ${(await answer.text().catch(() => '')).slice(0, 300)}`);
    });
  }, 15 * 60_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it.each(['127.0.0.1', 'localhost'])(
    'signs in from http://%s:<port> and stays on that name',
    async (name) => {
      const { page, context } = browser!;
      const origin = `http://${name}:${port}`;
      failures.length = 0;
      await page.goto(`${origin}/graphql`);
      await page.waitForSelector('.graphiql-container', { timeout: 20_000 });
      // Signed out on this name, whatever happened on the other: the session cookie belongs to one name.
      await page.locator('#who', { hasText: 'Not signed in.' }).waitFor();
      await page.locator('#sign-in').click();
      await page.waitForSelector('input[name="password"]');
      await page.fill('input[name="username"]', 'john');
      await page.fill('input[name="password"]', 'doe');
      await Promise.all([page.waitForURL(`${origin}/graphql`), page.locator('form button[type="submit"], form input[type="submit"]').first().click()]);
      await page.locator('#who', { hasText: 'banks: mock' }).waitFor({ timeout: 15_000 });
      // The holder's name as the bank gives it, not the opaque user id (which only the tooltip carries).
      expect(await page.locator('#who').textContent()).toBe('Signed in as John Doe · banks: mock');
      expect(await page.locator('#who').getAttribute('title')).toMatch(/^user id user_[\w-]+$/);
      expect((await context.cookies(origin)).find((cookie) => cookie.name === 'bankgraph_session')).toMatchObject({ domain: name, httpOnly: true });
      expect(failures).toEqual([]);
    },
    60_000,
  );
});
