import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/platform/observability/logger';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import {
  advanceSandboxClock,
  dataOf,
  fixtures,
  injectFault,
  ledger,
  onlyError,
  paymentsIn,
  providerRequests,
  QUIET_RECONCILER,
  READ_PAYMENT,
  REFUND_PAYMENT,
  type RefundView,
} from '../helpers/money';
import { startStack, type Stack } from '../helpers/stack';

type RefundResult = { refundPayment: RefundView };
type PaymentResult = { payment: { id: string; refundedAmountInMinor: number; refunds: RefundView[] } | null };

describe('refunds', () => {
  let stack: Stack;
  let seeded: Fixtures;

  beforeEach(async () => {
    stack = await startStack();
    seeded = await fixtures(stack);
  });

  afterEach(async () => {
    await stack?.close();
  });

  const refund = (input: Record<string, unknown>) => stack.graphql<RefundResult>(REFUND_PAYMENT, { input }, stack.merchantKey);
  const payment = async (id: string) => dataOf(await stack.graphql<PaymentResult>(READ_PAYMENT, { id }, stack.merchantKey)).payment;
  const refundPosts = async (): Promise<number> =>
    (await providerRequests(stack)).filter((request) => request.method === 'POST' && /^\/v3\/payments\/[^/]+\/refunds$/.test(request.path)).length;

  it('runs the back-office flow: part of a settled payment, the rest, then a third refused', async () => {
    const [settled] = paymentsIn(seeded, 'settled');
    const part = Math.floor(settled!.amount_in_minor / 3);

    const first = dataOf(await refund({ paymentId: settled!.id, amountInMinor: part, reference: 'Partial refund' })).refundPayment;
    expect(first).toMatchObject({
      paymentId: settled!.id,
      amountInMinor: part,
      currency: settled!.currency,
      status: 'AUTHORIZED',
      reference: 'Partial refund',
      executedAt: null,
      failureReason: null,
    });
    expect(first.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.authorizedAt).not.toBeNull();

    const rest = dataOf(await refund({ paymentId: settled!.id, amountInMinor: settled!.amount_in_minor - part, reference: 'The rest' })).refundPayment;
    expect(rest.amountInMinor).toBe(settled!.amount_in_minor - part);

    const third = await refund({ paymentId: settled!.id, amountInMinor: 1, reference: 'One more' });
    expect(third.data).toBeNull();
    const error = onlyError(third);
    expect(error.extensions?.code).toBe('REFUND_EXCEEDS_PAYMENT');
    expect(error.message).toContain(`A refund of 1 exceeds what is left to refund on payment ${settled!.id}`);
    expect(error.message).toContain(`${settled!.amount_in_minor} is already refunded or being refunded`);
    expect(error.message).toContain('at most 0 can still be refunded');

    const read = await payment(settled!.id);
    expect(read).toEqual({ id: settled!.id, refundedAmountInMinor: settled!.amount_in_minor, refunds: [first, rest] });
    expect((await ledger(stack)).refunds.map((entry) => entry.id)).toEqual([first.id, rest.id]);

    // Settled payments' refunds execute 60 s of sandbox time after authorisation.
    await advanceSandboxClock(stack, 61);
    const executed = await payment(settled!.id);
    expect(executed!.refunds.map((entry) => entry.status)).toEqual(['EXECUTED', 'EXECUTED']);
    expect(executed!.refunds.every((entry) => entry.executedAt !== null)).toBe(true);
  });

  it('refunds the whole payment when the amount is omitted', async () => {
    const [settled] = paymentsIn(seeded, 'settled');
    const whole = dataOf(await refund({ paymentId: settled!.id, reference: 'Full refund' })).refundPayment;
    expect(whole.amountInMinor).toBe(settled!.amount_in_minor);
    const more = await refund({ paymentId: settled!.id, amountInMinor: 5, reference: 'Too much' });
    expect(onlyError(more).extensions?.code).toBe('REFUND_EXCEEDS_PAYMENT');
  });

  it('refuses a refund of a failed payment, and of one not authorized yet', async () => {
    const [failed] = paymentsIn(seeded, 'failed');
    const result = await refund({ paymentId: failed!.id, amountInMinor: 100, reference: 'Refund' });
    expect(onlyError(result).extensions?.code).toBe('PAYMENT_NOT_REFUNDABLE');
    expect(onlyError(result).message).toContain(failed!.id);

    const [unauthorized] = paymentsIn(seeded, 'authorization_required');
    expect(onlyError(await refund({ paymentId: unauthorized!.id, reference: 'Refund' })).extensions?.code).toBe('PAYMENT_NOT_REFUNDABLE');
    expect((await ledger(stack)).refunds).toEqual([]);
  });

  it('ends a refund FAILED with payment_failed when its payment then fails, and stops counting it', async () => {
    const [authorized] = paymentsIn(seeded, 'authorized');
    const pending = dataOf(await refund({ paymentId: authorized!.id, amountInMinor: 500, reference: 'Before failure' })).refundPayment;
    expect(pending).toMatchObject({ status: 'PENDING', authorizedAt: null, failureReason: null });
    expect((await payment(authorized!.id))!.refundedAmountInMinor).toBe(500);

    await stack.sandboxJson('POST', `/sandbox/payments/${authorized!.id}/fail`);
    const read = await payment(authorized!.id);
    expect(read!.refunds).toEqual([{ ...pending, status: 'FAILED', failureReason: 'payment_failed' }]);
    expect(read!.refundedAmountInMinor).toBe(0);
  });

  it('moves a pending refund on when its payment settles', async () => {
    const [authorized] = paymentsIn(seeded, 'authorized');
    const pending = dataOf(await refund({ paymentId: authorized!.id, reference: 'Whole' })).refundPayment;
    expect(pending.status).toBe('PENDING');
    await stack.sandboxJson('POST', `/sandbox/payments/${authorized!.id}/settle`);
    expect((await payment(authorized!.id))!.refunds[0]!.status).toBe('AUTHORIZED');
  });

  it('answers null for a payment the provider does not know, and NOT_FOUND when refunding it', async () => {
    const unknown = randomUUID();
    const read = await stack.graphql<PaymentResult>(READ_PAYMENT, { id: unknown }, stack.merchantKey);
    expect(read).toMatchObject({ data: { payment: null } });
    expect(read.errors).toBeUndefined();

    const result = await refund({ paymentId: unknown, reference: 'Nope' });
    expect(onlyError(result).extensions?.code).toBe('NOT_FOUND');
    expect(onlyError(result).message).toContain(unknown);
  });

  it('lists no refunds for a payment that has none', async () => {
    const [executed] = paymentsIn(seeded, 'executed');
    expect(await payment(executed!.id)).toEqual({ id: executed!.id, refundedAmountInMinor: 0, refunds: [] });
  });

  it.each([
    ['paymentId', { paymentId: 'order-42' }, /UUID/],
    ['amountInMinor', { amountInMinor: 0 }, /positive/],
    ['amountInMinor', { amountInMinor: -1 }, /positive/],
    ['reference', { reference: '' }, /1 to 18 characters/],
    ['reference', { reference: 'x'.repeat(19) }, /at most 18 characters.*got 19/],
    ['idempotencyKey', { idempotencyKey: 'retry-please' }, /UUID/],
    ['reference', { reference: 'Refund \u202egnp.exe' }, /printable text.*got U\+202E at character 8/],
    ['reference', { reference: 'Re\u200bfund' }, /printable text.*got U\+200B at character 3/],
    ['reference', { reference: 'Refund \ud800' }, /unpaired UTF-16 surrogates; got U\+D800 at character 8/],
  ])('refuses a bad %s with BAD_USER_INPUT naming the field, before any provider call', async (field, change, message) => {
    const [settled] = paymentsIn(seeded, 'settled');
    const result = await refund({ paymentId: settled!.id, amountInMinor: 100, reference: 'Refund', ...change });
    expect(onlyError(result).extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: `input.${field}` });
    expect(onlyError(result).message).toMatch(message);
    expect(await providerRequests(stack)).toEqual([]);
  });

  it('counts reference characters, not bytes', async () => {
    const [settled] = paymentsIn(seeded, 'settled');
    const created = dataOf(await refund({ paymentId: settled!.id, amountInMinor: 10, reference: 'Rückerstattung ✓ é' })).refundPayment;
    expect(created.reference).toBe('Rückerstattung ✓ é');
  });

  it('refunds once for the same idempotencyKey sent twice, and refuses the key with another request', async () => {
    const [settled] = paymentsIn(seeded, 'settled');
    const input = { paymentId: settled!.id, amountInMinor: 300, reference: 'Once', idempotencyKey: randomUUID() };
    const first = dataOf(await refund(input)).refundPayment;
    const again = dataOf(await refund(input)).refundPayment;
    expect(again).toEqual(first);

    const other = await refund({ ...input, amountInMinor: 301 });
    expect(onlyError(other).extensions?.code).toBe('IDEMPOTENCY_CONFLICT');
    expect(onlyError(other).message).toContain(input.idempotencyKey);
    expect((await ledger(stack)).refunds).toHaveLength(1);
    expect(await refundPosts()).toBe(1);
  });

  it('refunds once for the same idempotencyKey sent twice at once', async () => {
    const [settled] = paymentsIn(seeded, 'settled');
    const input = { paymentId: settled!.id, amountInMinor: 250, reference: 'Concurrent', idempotencyKey: randomUUID() };
    const results = await Promise.all([refund(input), refund(input), refund(input)]);
    const ids = results.map((result) => dataOf(result).refundPayment.id);
    expect(new Set(ids).size).toBe(1);
    expect((await ledger(stack)).refunds).toHaveLength(1);
  });

  it('reuses the key it generated when the same request comes again without one', async () => {
    const [settled] = paymentsIn(seeded, 'settled');
    const input = { paymentId: settled!.id, amountInMinor: 200, reference: 'No key given' };
    const [a, b] = await Promise.all([refund(input), refund(input)]);
    const again = await refund(input);
    expect(dataOf(a).refundPayment.id).toBe(dataOf(b).refundPayment.id);
    expect(dataOf(again).refundPayment.id).toBe(dataOf(a).refundPayment.id);
    expect((await ledger(stack)).refunds).toHaveLength(1);

    // A different request is a different refund.
    dataOf(await refund({ ...input, reference: 'Another one' }));
    expect((await ledger(stack)).refunds).toHaveLength(2);
  });

  it.each([
    ['a 503 on the first POST', { status: 503, times: 1 }],
    ['a dropped connection on the first POST', { reset: true, times: 1 }],
    ['a dropped connection after the provider created the refund', { afterProcessing: true, reset: true, times: 1 }],
  ])('retries through %s with the same key and refunds exactly once', async (_case, fault) => {
    const [settled] = paymentsIn(seeded, 'settled');
    await injectFault(stack, { match: 'POST /v3/payments/*/refunds', ...fault });
    const created = dataOf(await refund({ paymentId: settled!.id, amountInMinor: 700, reference: 'Through a fault' })).refundPayment;
    expect(created).toMatchObject({ paymentId: settled!.id, amountInMinor: 700 });
    expect(await refundPosts()).toBe(2);
    expect((await ledger(stack)).refunds.map((entry) => entry.id)).toEqual([created.id]);
  });

  it('completes a refund whose every attempt failed when the same request is retried, without a second refund', async () => {
    const [settled] = paymentsIn(seeded, 'settled');
    await injectFault(stack, { match: 'POST /v3/payments/*/refunds', afterProcessing: true, status: 503, times: 3 });
    const input = { paymentId: settled!.id, amountInMinor: 900, reference: 'Lost answers' };
    const failed = await refund(input);
    expect(onlyError(failed).extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    // The provider did the work on the first send; the gateway's own key made every resend the same refund.
    expect((await ledger(stack)).refunds).toHaveLength(1);

    const retried = dataOf(await refund(input)).refundPayment;
    expect((await ledger(stack)).refunds.map((entry) => entry.id)).toEqual([retried.id]);
  });
});

describe('refund attempts whose outcome is unknown', () => {
  const DAY_AND_AN_HOUR_MS = 25 * 3600 * 1000;
  let stack: Stack;
  let seeded: Fixtures;
  /** The gateway's refund clock runs this far ahead of the wall clock. */
  let clockOffsetMs = 0;

  beforeEach(async () => {
    clockOffsetMs = 0;
    stack = await startStack({ gateway: { clock: () => Date.now() + clockOffsetMs } });
    seeded = await fixtures(stack);
  });

  afterEach(async () => {
    await stack?.close();
  });

  const refund = (input: Record<string, unknown>) => stack.graphql<RefundResult>(REFUND_PAYMENT, { input }, stack.merchantKey);
  const refundPosts = async (): Promise<number> =>
    (await providerRequests(stack)).filter((request) => request.method === 'POST' && /^\/v3\/payments\/[^/]+\/refunds$/.test(request.path)).length;
  const repairs = async (kind: string): Promise<number> => {
    const metrics = await (await fetch(`${stack.gateway.url}/metrics`)).text();
    const match = new RegExp(`bankgraph_reconciler_repairs_total\\{kind="${kind}"\\} (\\d+)`).exec(metrics);
    return match ? Number(match[1]) : 0;
  };

  /** Every send of the refund reaches the provider, which makes the refund, and every answer is lost. */
  async function loseEveryAnswer(input: Record<string, unknown>): Promise<void> {
    await injectFault(stack, { match: 'POST /v3/payments/*/refunds', afterProcessing: true, status: 503, times: 3 });
    expect(onlyError(await refund(input)).extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    await stack.sandboxJson('DELETE', '/sandbox/faults');
  }

  /** Past the provider's 24 hours of key memory, for the provider and for the gateway alike. */
  async function waitADayAndAnHour(): Promise<void> {
    await advanceSandboxClock(stack, DAY_AND_AN_HOUR_MS / 1000);
    clockOffsetMs += DAY_AND_AN_HOUR_MS;
  }

  it.each([
    ['without an idempotencyKey', {}],
    ['with an idempotencyKey', { idempotencyKey: randomUUID() }],
  ])('finds the first refund in the refund list when the request %s is retried 25 hours later, with no second refund', async (_case, key) => {
    const [settled] = paymentsIn(seeded, 'settled');
    const input = { paymentId: settled!.id, amountInMinor: 640, reference: 'Lost then late', ...key };
    await loseEveryAnswer(input);
    const [made] = (await ledger(stack)).refunds;
    expect(made).toBeDefined();
    const posts = await refundPosts();

    await waitADayAndAnHour();
    const retried = dataOf(await refund(input)).refundPayment;
    expect(retried).toMatchObject({ id: made!.id, amountInMinor: 640, reference: 'Lost then late' });
    expect((await ledger(stack)).refunds.map((entry) => entry.id)).toEqual([made!.id]);
    expect(await refundPosts()).toBe(posts);

    // Answered once, it is remembered like any other: the same request again is the same refund, from the store.
    expect(dataOf(await refund(input)).refundPayment.id).toBe(made!.id);
    expect((await ledger(stack)).refunds).toHaveLength(1);
  });

  it('settles a lost attempt in the reconciler pass, so a retry any time later answers its refund without the list', async () => {
    const [settled] = paymentsIn(seeded, 'settled');
    const input = { paymentId: settled!.id, amountInMinor: 320, reference: 'Found later' };
    await loseEveryAnswer(input);
    const [made] = (await ledger(stack)).refunds;

    // Not while a request may still be sending it; once it is quiet, the pass settles it.
    await stack.gateway.scheduler.runOnce();
    expect(await repairs('refund_attempt_found')).toBe(0);
    clockOffsetMs += 6 * 60 * 1000;
    await stack.gateway.scheduler.runOnce();
    expect(await repairs('refund_attempt_found')).toBe(1);

    await waitADayAndAnHour();
    // The refund list is unavailable: only a refund the reconciler recorded can answer the retry.
    await injectFault(stack, { match: 'GET /v3/payments/*/refunds', status: 503 });
    const retried = dataOf(await refund(input)).refundPayment;
    expect(retried.id).toBe(made!.id);
    expect((await ledger(stack)).refunds).toHaveLength(1);
  });

  it('forgets in the reconciler pass an attempt that made no refund, and a retry then refunds once', async () => {
    const [settled] = paymentsIn(seeded, 'settled');
    const input = { paymentId: settled!.id, amountInMinor: 160, reference: 'Never arrived' };
    await injectFault(stack, { match: 'POST /v3/payments/*/refunds', status: 503, times: 3 });
    expect(onlyError(await refund(input)).extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    expect((await ledger(stack)).refunds).toEqual([]);

    clockOffsetMs += 6 * 60 * 1000;
    await stack.gateway.scheduler.runOnce();
    expect(await repairs('refund_attempt_not_made')).toBe(1);

    const created = dataOf(await refund(input)).refundPayment;
    expect((await ledger(stack)).refunds.map((entry) => entry.id)).toEqual([created.id]);
  });
});

describe('two refunds of identical items, whose answers were lost', () => {
  let stack: Stack;
  let seeded: Fixtures;
  /** The gateway's refund clock runs this far ahead of the wall clock. */
  let clockOffsetMs = 0;

  /** What the gateway logged, one JSON line each. */
  let lines: string[] = [];

  beforeEach(async () => {
    clockOffsetMs = 0;
    lines = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    stack = await startStack({
      // Every send of both requests fails: the breaker would otherwise stop the second request before the provider.
      env: { ...QUIET_RECONCILER, PROVIDER_BREAKER_FAILURES: '1000' },
      gateway: { clock: () => Date.now() + clockOffsetMs, logger: createLogger('info', sink) },
    });
    seeded = await fixtures(stack);
  });

  afterEach(async () => {
    await stack?.close();
  });

  const refund = (input: Record<string, unknown>) => stack.graphql<RefundResult>(REFUND_PAYMENT, { input }, stack.merchantKey);

  /** The request fails with every send's answer lost: `processed` says whether the provider made the refund first. */
  async function failEverySend(input: Record<string, unknown>, processed: 'before' | 'after', lost: 'reset' | '503'): Promise<void> {
    const answer = lost === 'reset' ? { reset: true } : { status: 503 };
    await injectFault(stack, { match: 'POST /v3/payments/*/refunds', ...answer, ...(processed === 'after' ? { afterProcessing: true } : {}) });
    expect(onlyError(await refund(input)).extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    await stack.sandboxJson('DELETE', '/sandbox/faults');
  }

  // Two identical items refunded: same payment, amount and reference, two idempotency keys.
  it.each([
    ['the first lost before the provider, the second made but answered 503; retried first, then second', 'before', 'first', 0],
    ['the first lost before the provider, the second made but answered 503; retried second, then first', 'before', 'second', 0],
    ['the first lost before the provider, the second made but answered 503; the reconciler runs, then the retries', 'before', 'first', 6],
    ['both made with their answers lost; retried second, then first', 'after', 'second', 0],
    ['the first lost before the provider, the second made but answered 503; retried 26 hours later', 'before', 'first', 26 * 60],
  ] as const)('keeps two refunds two: %s', async (_case, firstProcessed, retriedFirst, minutesLater) => {
    const [settled] = paymentsIn(seeded, 'settled');
    const item = { paymentId: settled!.id, amountInMinor: 450, reference: 'Item returned' };
    const first = { ...item, idempotencyKey: randomUUID() };
    const second = { ...item, idempotencyKey: randomUUID() };
    await failEverySend(first, firstProcessed, 'reset');
    await failEverySend(second, 'after', '503');

    if (minutesLater >= 24 * 60) await advanceSandboxClock(stack, minutesLater * 60);
    clockOffsetMs += minutesLater * 60 * 1000;
    if (minutesLater > 0) await stack.gateway.scheduler.runOnce();

    const order = retriedFirst === 'first' ? [first, second] : [second, first];
    const answered = new Map<unknown, string>();
    for (const input of order) answered.set(input, dataOf(await refund(input)).refundPayment.id);
    const [firstId, secondId] = [answered.get(first)!, answered.get(second)!];

    expect(firstId).not.toBe(secondId);
    const held = (await ledger(stack)).refunds.filter((entry) => entry.paymentId === settled!.id);
    expect(held.map((entry) => entry.id).sort()).toEqual([firstId, secondId].sort());
    // Within the provider's key memory each request gets what the provider made under its own key (the first made first).
    if (firstProcessed === 'after' && minutesLater < 23 * 60) expect([firstId, secondId]).toEqual(held.map((entry) => entry.id));
    // Asked again, each request is still answered its own refund: nothing was taken from either.
    expect(dataOf(await refund(first)).refundPayment.id).toBe(firstId);
    expect(dataOf(await refund(second)).refundPayment.id).toBe(secondId);
    expect((await ledger(stack)).refunds.filter((entry) => entry.paymentId === settled!.id)).toHaveLength(2);
  });

  it('never takes a refund answered to one request for another: with the gateway clock a day ahead, the later claim stays pending, is logged and counted', async () => {
    const [settled] = paymentsIn(seeded, 'settled');
    const item = { paymentId: settled!.id, amountInMinor: 450, reference: 'Item returned' };
    const first = { ...item, idempotencyKey: randomUUID() };
    const second = { ...item, idempotencyKey: randomUUID() };
    await failEverySend(first, 'before', 'reset');
    await failEverySend(second, 'after', '503');
    const [made] = (await ledger(stack)).refunds;

    // The gateway believes both keys forgotten; the provider still remembers the second.
    clockOffsetMs += 26 * 3600 * 1000;
    const firstId = dataOf(await refund(first)).refundPayment.id;
    expect(firstId).toBe(made!.id);
    const refused = await refund(second);
    expect(onlyError(refused).extensions).toMatchObject({ code: 'TRY_AGAIN' });
    expect(onlyError(refused).extensions?.retryAfterSeconds).toBeGreaterThan(3600);
    expect(onlyError(refused).message).toContain(`The provider answered refund ${made!.id} for idempotencyKey ${second.idempotencyKey}`);
    expect(onlyError(refused).message).toContain('does not take it back');
    expect(dataOf(await refund(first)).refundPayment.id).toBe(firstId);

    const metrics = await (await fetch(`${stack.gateway.url}/metrics`)).text();
    expect(metrics).toContain('bankgraph_refund_claim_conflicts_total{claim="provider_answer"} 1');
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => String(line.msg).startsWith('refund claim conflict'));
    expect(logged).toEqual([
      expect.objectContaining({
        claim: 'provider_answer',
        paymentId: settled!.id,
        refundId: made!.id,
        idempotencyKey: second.idempotencyKey,
        heldBy: first.idempotencyKey,
      }),
    ]);
    expect(lines.join('\n')).not.toContain(stack.merchantKey);

    // Once the provider has forgotten the second key too, the second request is sent afresh: two refunds.
    await advanceSandboxClock(stack, 26 * 3600);
    const secondId = dataOf(await refund(second)).refundPayment.id;
    expect(secondId).not.toBe(firstId);
    expect((await ledger(stack)).refunds.map((entry) => entry.id).sort()).toEqual([firstId, secondId].sort());
  });
});
