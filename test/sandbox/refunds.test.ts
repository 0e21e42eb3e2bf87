import { randomUUID } from 'node:crypto';
import { isValidIban } from '../../src/sandbox/fixtures/bank-details';
import { generatePayments, paymentId } from '../../src/sandbox/fixtures/payments';
import { createSandbox, type Sandbox } from '../../src/sandbox/sandbox';
import { getAppToken, getUserToken } from '../helpers/sandbox-auth';
import { callSandbox, createTestSigningKey, registration, send, signRequest, type HttpResult } from '../helpers/sandbox-signing';
import { startWebhookListener, verifyWebhookSignature, type ReceivedWebhook, type WebhookListener } from '../helpers/sandbox-webhooks';

const key = createTestSigningKey('refunds-test-key');
const PROBLEM = 'https://docs.truelayer.com/docs/error-types#';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let sandbox: Sandbox;
let token: string;
let listener: WebhookListener | undefined;

beforeEach(async () => {
  sandbox = await createSandbox({ port: 0, signingKeys: [registration(key)] });
  token = (await getAppToken(sandbox, 'payments')).access_token;
});

afterEach(async () => {
  await sandbox?.close();
  await listener?.close();
  listener = undefined;
});

interface CreateOptions {
  idempotencyKey?: string | null;
  bearer?: string;
  signedHeaders?: string[];
}

function createRefund(payment: string, body: unknown, options: CreateOptions = {}): Promise<HttpResult> {
  const idempotencyKey = options.idempotencyKey === undefined ? randomUUID() : options.idempotencyKey;
  return callSandbox(sandbox.url, {
    method: 'POST',
    path: `/v3/payments/${payment}/refunds`,
    token: options.bearer ?? token,
    headers: idempotencyKey === null ? {} : { 'Idempotency-Key': idempotencyKey },
    body,
    sign: { key, header: 'Svc-Signature', signedHeaders: options.signedHeaders ?? ['Idempotency-Key'] },
  });
}

function getRefund(payment: string, refundId: string): Promise<HttpResult> {
  return callSandbox(sandbox.url, { method: 'GET', path: `/v3/payments/${payment}/refunds/${refundId}`, token, sign: { key, header: 'Svc-Signature' } });
}

function listRefunds(payment: string): Promise<HttpResult> {
  return callSandbox(sandbox.url, { method: 'GET', path: `/v3/payments/${payment}/refunds`, token, sign: { key, header: 'Svc-Signature' } });
}

function control(method: string, path: string, body?: unknown): Promise<HttpResult> {
  return callSandbox(sandbox.url, { method, path, body });
}

async function advance(seconds: number): Promise<void> {
  expect((await control('POST', '/sandbox/clock', { advanceSeconds: seconds })).status).toBe(200);
}

async function ledgerRefunds(): Promise<{ id: string; paymentId: string; amount_in_minor: number; currency: string }[]> {
  return (await control('GET', '/sandbox/ledger')).body.refunds;
}

async function refundOf(payment: string, refundId: string): Promise<any> {
  const result = await getRefund(payment, refundId);
  expect(result.status).toBe(200);
  return result.body;
}

async function createdId(payment: string, body: unknown): Promise<string> {
  const result = await createRefund(payment, body);
  expect(result.status).toBe(202);
  return result.body.id;
}

async function useListener(): Promise<WebhookListener> {
  listener = await startWebhookListener('/hooks/payments');
  expect((await control('POST', '/sandbox/config', { paymentsWebhookUrl: listener.url })).status).toBe(200);
  return listener;
}

/** The next `count` deliveries, in arrival order. */
async function takeWebhooks(hooks: WebhookListener, count: number): Promise<ReceivedWebhook[]> {
  const taken: ReceivedWebhook[] = [];
  for (let i = 0; i < count; i++) taken.push(await hooks.next());
  return taken;
}

/** Tl-Signature checked as a receiver would, against the sandbox's published JWKS. */
async function expectSignedBySandbox(webhook: ReceivedWebhook): Promise<void> {
  expect(await verifyWebhookSignature(sandbox, webhook)).toMatchObject({ ok: true, jku: `${sandbox.url}/.well-known/jwks` });
}

function expectProblem(result: HttpResult, status: number, slug: string): void {
  expect(result.status).toBe(status);
  expect(result.headers.get('content-type')).toBe('application/problem+json');
  expect(result.body).toMatchObject({ type: PROBLEM + slug, status });
  expect(typeof result.body.detail).toBe('string');
}

const SETTLED = paymentId('settled-gbp-1'); // 12500 GBP
const SETTLED_EUR = paymentId('settled-eur-1'); // 20000 EUR
const AUTHORIZED = paymentId('authorized-gbp-1'); // 30000 GBP
const AUTHORIZED_SMALL = paymentId('authorized-gbp-2'); // 2500 GBP
const EXECUTED = paymentId('executed-gbp-1'); // 8000 GBP

describe('payment fixtures', () => {
  it('seeds payments in every status, with stable ids', async () => {
    const payments = (await control('GET', '/sandbox/fixtures')).body.payments as { id: string; status: string; currency: string }[];
    const count = (status: string) => payments.filter((payment) => payment.status === status).length;
    expect(count('settled')).toBeGreaterThanOrEqual(3);
    expect(count('authorized')).toBeGreaterThanOrEqual(2);
    expect(count('executed')).toBeGreaterThanOrEqual(2);
    expect(count('authorization_required')).toBe(1);
    expect(count('authorizing')).toBe(1);
    expect(count('failed')).toBe(2);
    expect(new Set(payments.map((payment) => payment.currency))).toEqual(new Set(['GBP', 'EUR']));
    expect(payments.find((payment) => payment.id === SETTLED)).toMatchObject({ status: 'settled', amount_in_minor: 12500 });
    for (const payment of payments) expect(payment.id).toMatch(UUID);
  });

  it('is the same on every generation, with valid payer IBANs, and fresh objects each time', () => {
    const first = generatePayments();
    const second = generatePayments();
    expect(second).toEqual(first);
    expect(second[0]).not.toBe(first[0]);
    expect(new Set(first.map((payment) => payment.id)).size).toBe(first.length);
    for (const payment of first) {
      expect(isValidIban(payment.payer.iban)).toBe(true);
      expect(payment.payer.account_holder_name).not.toBe('');
      expect(Boolean(payment.settled_at)).toBe(payment.status === 'settled');
      expect(Boolean(payment.failed_at)).toBe(payment.status === 'failed');
    }
  });
});

describe('POST /v3/payments/{payment_id}/refunds', () => {
  it('answers 202 {id} and records the refund once; a refund of a settled payment is authorized at once', async () => {
    const result = await createRefund(SETTLED, { amount_in_minor: 5000, reference: 'Order 1234 refund' });
    expect(result.status).toBe(202);
    expect(Object.keys(result.body)).toEqual(['id']);
    expect(result.body.id).toMatch(UUID);

    const refund = await refundOf(SETTLED, result.body.id);
    expect(refund).toEqual({
      id: result.body.id,
      amount_in_minor: 5000,
      currency: 'GBP',
      status: 'authorized',
      reference: 'Order 1234 refund',
      created_at: expect.any(String),
      authorized_at: refund.created_at,
    });
    expect(await ledgerRefunds()).toEqual([
      { kind: 'refund', id: result.body.id, paymentId: SETTLED, amount_in_minor: 5000, currency: 'GBP', created_at: refund.created_at },
    ]);
  });

  it('refunds the whole payment when amount_in_minor is omitted, in the payment currency', async () => {
    const id = await createdId(SETTLED_EUR, { reference: 'Full refund' });
    expect(await refundOf(SETTLED_EUR, id)).toMatchObject({ amount_in_minor: 20000, currency: 'EUR' });
    expectProblem(await createRefund(SETTLED_EUR, { amount_in_minor: 1, reference: 'One more' }), 409, 'refund-limit-exceeded');
  });

  describe('payment status', () => {
    it.each([
      ['authorized-gbp-1', 'pending'],
      ['authorized-eur-1', 'pending'],
      ['executed-gbp-1', 'pending'],
      ['executed-eur-1', 'pending'],
      ['settled-gbp-2', 'authorized'],
      ['settled-eur-2', 'authorized'],
    ])('refunds a payment %s (the refund is %s)', async (fixture, refundStatus) => {
      const id = await createdId(paymentId(fixture), { amount_in_minor: 1, reference: 'Partial' });
      expect((await refundOf(paymentId(fixture), id)).status).toBe(refundStatus);
    });

    it.each([
      ['authorization-required-gbp-1', 'authorization_required'],
      ['authorizing-eur-1', 'authorizing'],
      ['failed-gbp-1', 'failed'],
      ['failed-eur-1', 'failed'],
    ])('answers 409 payment-not-refundable for %s', async (fixture, status) => {
      const result = await createRefund(paymentId(fixture), { amount_in_minor: 1, reference: 'Partial' });
      expectProblem(result, 409, 'payment-not-refundable');
      expect(result.body.detail).toContain(`is ${status}`);
      expect(await ledgerRefunds()).toEqual([]);
    });

    it('answers 404 not-found for an unknown payment', async () => {
      expectProblem(await createRefund(randomUUID(), { reference: 'Nope' }), 404, 'not-found');
      expectProblem(await createRefund('not-a-payment', { reference: 'Nope' }), 404, 'not-found');
    });
  });

  describe('refund limit', () => {
    it('refuses an amount above the payment with 409 refund-limit-exceeded', async () => {
      const result = await createRefund(SETTLED, { amount_in_minor: 12501, reference: 'Too much' });
      expectProblem(result, 409, 'refund-limit-exceeded');
      expect(result.body.detail).toMatch(/at most 12500/);
    });

    it('refuses a partial refund that takes the total above the payment, saying how much is left', async () => {
      await createdId(SETTLED, { amount_in_minor: 5000, reference: 'First' });
      await createdId(SETTLED, { amount_in_minor: 5000, reference: 'Second' });
      const over = await createRefund(SETTLED, { amount_in_minor: 2501, reference: 'Third' });
      expectProblem(over, 409, 'refund-limit-exceeded');
      expect(over.body.detail).toMatch(/10000 is already refunded/);
      expect(over.body.detail).toMatch(/at most 2500/);
      await createdId(SETTLED, { amount_in_minor: 2500, reference: 'Third' });
      expectProblem(await createRefund(SETTLED, { amount_in_minor: 1, reference: 'Fourth' }), 409, 'refund-limit-exceeded');
      expectProblem(await createRefund(SETTLED, { reference: 'Whole again' }), 409, 'refund-limit-exceeded');
      expect(await ledgerRefunds()).toHaveLength(3);
    });

    it('counts pending refunds towards the total', async () => {
      await createdId(AUTHORIZED_SMALL, { amount_in_minor: 2000, reference: 'Pending' });
      expectProblem(await createRefund(AUTHORIZED_SMALL, { amount_in_minor: 501, reference: 'Over' }), 409, 'refund-limit-exceeded');
    });

    it('does not count failed refunds towards the total', async () => {
      const failed = await createdId(AUTHORIZED_SMALL, { reference: 'Whole' });
      expect((await control('POST', `/sandbox/payments/${AUTHORIZED_SMALL}/fail`)).status).toBe(200);
      expect((await refundOf(AUTHORIZED_SMALL, failed)).status).toBe('failed');
      // Through the API a failed refund implies a failed, hence unrefundable, payment; so the rule is observed by
      // bringing the same payment back to settled in-process, which no provider call can do.
      const payment = sandbox.context.fixtures.payments.find((candidate) => candidate.id === AUTHORIZED_SMALL)!;
      payment.status = 'settled';
      payment.settled_at = sandbox.context.clock.iso();
      delete payment.failed_at;
      const again = await createdId(AUTHORIZED_SMALL, { reference: 'Whole again' });
      expect((await refundOf(AUTHORIZED_SMALL, again)).amount_in_minor).toBe(2500);
    });

    it('lets only one of two concurrent full refunds with different keys through', async () => {
      const results = await Promise.all([createRefund(SETTLED, { reference: 'Race A' }), createRefund(SETTLED, { reference: 'Race B' })]);
      expect(results.map((result) => result.status).sort()).toEqual([202, 409]);
      expect(results.find((result) => result.status === 409)!.body.type).toBe(`${PROBLEM}refund-limit-exceeded`);
      expect(await ledgerRefunds()).toHaveLength(1);
    });
  });

  describe('body validation: 400 invalid-parameters', () => {
    it('accepts a reference of 18 characters and refuses 19', async () => {
      expect((await createRefund(SETTLED, { amount_in_minor: 1, reference: 'ABCDEFGHIJKLMNOPQR' })).status).toBe(202);
      expect((await createRefund(SETTLED, { amount_in_minor: 1, reference: 'Café refund 18 chr' })).status).toBe(202);
      const tooLong = await createRefund(SETTLED, { amount_in_minor: 1, reference: 'ABCDEFGHIJKLMNOPQRS' });
      expectProblem(tooLong, 400, 'invalid-parameters');
      expect(tooLong.body.errors).toEqual({ reference: ['must be at most 18 characters; got 19'] });
    });

    it.each([
      ['reference', 'missing', { amount_in_minor: 100 }],
      ['reference', 'empty', { amount_in_minor: 100, reference: '' }],
      ['reference', 'not a string', { amount_in_minor: 100, reference: 12 }],
      ['amount_in_minor', 'zero', { amount_in_minor: 0, reference: 'Ref' }],
      ['amount_in_minor', 'negative', { amount_in_minor: -5, reference: 'Ref' }],
      ['amount_in_minor', 'fractional', { amount_in_minor: 10.5, reference: 'Ref' }],
      ['amount_in_minor', 'a string', { amount_in_minor: '100', reference: 'Ref' }],
      ['amount_in_minor', 'null', { amount_in_minor: null, reference: 'Ref' }],
      ['amount_in_minor', 'beyond a safe integer', { amount_in_minor: 2 ** 53, reference: 'Ref' }],
    ])('%s %s', async (field, _case, body) => {
      const result = await createRefund(SETTLED, body);
      expectProblem(result, 400, 'invalid-parameters');
      expect(Object.keys(result.body.errors)).toEqual([field]);
      expect(await ledgerRefunds()).toEqual([]);
    });

    it('refuses a body that is not a JSON object, and bad JSON', async () => {
      expectProblem(await createRefund(SETTLED, ['reference']), 400, 'invalid-parameters');
      expectProblem(await createRefund(SETTLED, '{"reference":'), 400, 'invalid-parameters');
    });
  });

  describe('Idempotency-Key and signature', () => {
    it('requires the Idempotency-Key header', async () => {
      const result = await createRefund(SETTLED, { reference: 'No key' }, { idempotencyKey: null });
      expectProblem(result, 400, 'invalid-parameters');
      expect(result.body.errors).toEqual({ 'Idempotency-Key': ['is required'] });
    });

    it('requires the Idempotency-Key to be a UUID', async () => {
      const result = await createRefund(SETTLED, { reference: 'Bad key' }, { idempotencyKey: 'retry-1' });
      expectProblem(result, 400, 'invalid-parameters');
      expect(result.body.detail).toMatch(/UUID/);
    });

    it('refuses a signature that does not cover the Idempotency-Key with 401 invalid-signature', async () => {
      const result = await createRefund(SETTLED, { reference: 'Uncovered' }, { signedHeaders: [] });
      expectProblem(result, 401, 'invalid-signature');
      expect(result.body.detail).toMatch(/Idempotency-Key/);
    });

    it('refuses an Idempotency-Key swapped after signing', async () => {
      const path = `/v3/payments/${SETTLED}/refunds`;
      const bytes = JSON.stringify({ reference: 'Swapped' });
      const signature = signRequest(key, { method: 'POST', path, headers: { 'Idempotency-Key': randomUUID() }, body: bytes }, ['Idempotency-Key']);
      const result = await send(
        sandbox.url,
        'POST',
        path,
        { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID(), 'Svc-Signature': signature },
        bytes,
      );
      expectProblem(result, 401, 'invalid-signature');
    });

    it('refuses a missing signature and a tampered body', async () => {
      const path = `/v3/payments/${SETTLED}/refunds`;
      const idempotencyKey = randomUUID();
      const bytes = JSON.stringify({ amount_in_minor: 100, reference: 'Tamper' });
      const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey };
      expectProblem(await send(sandbox.url, 'POST', path, headers, bytes), 401, 'invalid-signature');
      const signature = signRequest(key, { method: 'POST', path, headers, body: bytes }, ['Idempotency-Key']);
      const tampered = bytes.replace('100', '900');
      expectProblem(await send(sandbox.url, 'POST', path, { ...headers, 'Svc-Signature': signature }, tampered), 401, 'invalid-signature');
      expect(await ledgerRefunds()).toEqual([]);
    });
  });

  describe('access token', () => {
    it('refuses a missing token with 401 and a token without payments with 403', async () => {
      const noToken = await callSandbox(sandbox.url, {
        method: 'POST',
        path: `/v3/payments/${SETTLED}/refunds`,
        headers: { 'Idempotency-Key': randomUUID() },
        body: { reference: 'No token' },
        sign: { key, header: 'Svc-Signature', signedHeaders: ['Idempotency-Key'] },
      });
      expectProblem(noToken, 401, 'unauthenticated');
      const payoutsOnly = (await getAppToken(sandbox, 'paydirect')).access_token;
      const wrongScope = await createRefund(SETTLED, { reference: 'Wrong scope' }, { bearer: payoutsOnly });
      expectProblem(wrongScope, 403, 'forbidden');
      expect(wrongScope.body.detail).toMatch(/payments/);
    });

    it('refuses an end-user token with 403', async () => {
      const userToken = (await getUserToken(sandbox)).access_token;
      expectProblem(await createRefund(SETTLED, { reference: 'User token' }, { bearer: userToken }), 403, 'forbidden');
    });
  });

  describe('idempotency', () => {
    it('answers a replay of the same key and body with the same id, creating nothing new', async () => {
      const idempotencyKey = randomUUID();
      const first = await createRefund(SETTLED, { amount_in_minor: 700, reference: 'Replay' }, { idempotencyKey });
      const again = await createRefund(SETTLED, { amount_in_minor: 700, reference: 'Replay' }, { idempotencyKey });
      expect(again.status).toBe(202);
      expect(again.body).toEqual(first.body);
      expect(await ledgerRefunds()).toHaveLength(1);
    });

    it('answers 422 idempotency-key-reuse for the same key with another body or another payment', async () => {
      const idempotencyKey = randomUUID();
      await createRefund(SETTLED, { amount_in_minor: 700, reference: 'Reuse' }, { idempotencyKey });
      expectProblem(await createRefund(SETTLED, { amount_in_minor: 701, reference: 'Reuse' }, { idempotencyKey }), 422, 'idempotency-key-reuse');
      expectProblem(await createRefund(SETTLED, { reference: 'Reuse' }, { idempotencyKey }), 422, 'idempotency-key-reuse');
      expectProblem(await createRefund(SETTLED_EUR, { amount_in_minor: 700, reference: 'Reuse' }, { idempotencyKey }), 422, 'idempotency-key-reuse');
      expect(await ledgerRefunds()).toHaveLength(1);
    });

    it('does not remember a key whose request was refused, so the corrected request can use it', async () => {
      const idempotencyKey = randomUUID();
      expectProblem(await createRefund(SETTLED, { amount_in_minor: 99999, reference: 'Too much' }, { idempotencyKey }), 409, 'refund-limit-exceeded');
      expect((await createRefund(SETTLED, { amount_in_minor: 999, reference: 'Corrected' }, { idempotencyKey })).status).toBe(202);
    });

    it('answers 409 idempotency-key-concurrency-conflict while a request with the key is in flight; one refund results', async () => {
      const idempotencyKey = randomUUID();
      const body = { amount_in_minor: 300, reference: 'Concurrent' };
      const results = await Promise.all(Array.from({ length: 5 }, () => createRefund(SETTLED, body, { idempotencyKey })));
      const accepted = results.filter((result) => result.status === 202);
      const conflicts = results.filter((result) => result.status !== 202);
      expect(accepted.length).toBeGreaterThanOrEqual(1);
      expect(new Set(accepted.map((result) => result.body.id)).size).toBe(1);
      expect(conflicts.length).toBeGreaterThanOrEqual(1);
      for (const conflict of conflicts) expectProblem(conflict, 409, 'idempotency-key-concurrency-conflict');
      expect(await ledgerRefunds()).toHaveLength(1);
      // Once the first has been answered, a retry gets its id.
      const retry = await createRefund(SETTLED, body, { idempotencyKey });
      expect(retry.body.id).toBe(accepted[0]!.body.id);
    });

    it('remembers a key for 24 hours of sandbox time', async () => {
      const idempotencyKey = randomUUID();
      const body = { amount_in_minor: 100, reference: 'Day-long key' };
      const first = (await createRefund(SETTLED, body, { idempotencyKey })).body.id;
      await advance(23 * 3600 + 59 * 60);
      token = (await getAppToken(sandbox, 'payments')).access_token;
      expect((await createRefund(SETTLED, body, { idempotencyKey })).body.id).toBe(first);
      await advance(60);
      token = (await getAppToken(sandbox, 'payments')).access_token;
      const later = await createRefund(SETTLED, body, { idempotencyKey });
      expect(later.status).toBe(202);
      expect(later.body.id).not.toBe(first);
      expect(await ledgerRefunds()).toHaveLength(2);
    });
  });
});

describe('refund lifecycle', () => {
  it('moves pending -> authorized when the payment settles -> executed 60 s later, with a signed refund_executed webhook', async () => {
    const hooks = await useListener();
    const id = await createdId(AUTHORIZED, { amount_in_minor: 1000, reference: 'Lifecycle' });
    const pending = await refundOf(AUTHORIZED, id);
    expect(pending.status).toBe('pending');
    expect(Object.keys(pending)).toEqual(['id', 'amount_in_minor', 'currency', 'status', 'reference', 'created_at']);

    await advance(3600 - 10); // pending however long the payment takes
    token = (await getAppToken(sandbox, 'payments')).access_token;
    expect((await refundOf(AUTHORIZED, id)).status).toBe('pending');

    const settled = await control('POST', `/sandbox/payments/${AUTHORIZED}/settle`);
    expect(settled.status).toBe(200);
    expect(settled.body).toMatchObject({ id: AUTHORIZED, status: 'settled' });
    expect(Math.abs(Date.parse(settled.body.settled_at) - sandbox.context.clock.nowMs())).toBeLessThan(5000);
    const authorized = await refundOf(AUTHORIZED, id);
    expect(authorized).toMatchObject({ status: 'authorized', authorized_at: settled.body.settled_at });
    expect(authorized.executed_at).toBeUndefined();

    await advance(59);
    expect((await refundOf(AUTHORIZED, id)).status).toBe('authorized');
    await advance(1);
    const executed = await refundOf(AUTHORIZED, id);
    expect(executed).toMatchObject({ status: 'executed', authorized_at: settled.body.settled_at });
    expect(Date.parse(executed.executed_at)).toBe(Date.parse(settled.body.settled_at) + 60_000);
    expect(Object.keys(executed)).toEqual(['id', 'amount_in_minor', 'currency', 'status', 'reference', 'created_at', 'authorized_at', 'executed_at']);

    const [webhook] = await takeWebhooks(hooks, 1);
    expect(webhook!.path).toBe('/hooks/payments');
    expect(webhook!.body).toEqual({
      type: 'refund_executed',
      event_id: expect.stringMatching(UUID),
      event_version: 1,
      payment_id: AUTHORIZED,
      refund_id: id,
      executed_at: executed.executed_at,
    });
    await expectSignedBySandbox(webhook!);
  });

  it('executes a refund of an already settled payment 60 s after it was created', async () => {
    const hooks = await useListener();
    const id = await createdId(SETTLED, { amount_in_minor: 100, reference: 'Quick' });
    const authorized = await refundOf(SETTLED, id);
    await advance(60);
    const executed = await refundOf(SETTLED, id);
    expect(executed.status).toBe('executed');
    expect(Date.parse(executed.executed_at)).toBe(Date.parse(authorized.authorized_at) + 60_000);
    expect((await takeWebhooks(hooks, 1))[0]!.body.refund_id).toBe(id);
  });

  it('fails pending refunds with payment_failed when the payment fails, each with a signed refund_failed webhook', async () => {
    const hooks = await useListener();
    const first = await createdId(EXECUTED, { amount_in_minor: 3000, reference: 'One' });
    const second = await createdId(EXECUTED, { amount_in_minor: 2000, reference: 'Two' });
    const failedPayment = await control('POST', `/sandbox/payments/${EXECUTED}/fail`);
    expect(failedPayment.body).toMatchObject({ id: EXECUTED, status: 'failed', failed_at: expect.any(String) });

    for (const id of [first, second]) {
      const refund = await refundOf(EXECUTED, id);
      expect(refund).toMatchObject({ status: 'failed', failure_reason: 'payment_failed' });
      expect(refund.authorized_at).toBeUndefined();
      expect(refund.executed_at).toBeUndefined();
    }
    const webhooks = await takeWebhooks(hooks, 2);
    expect(webhooks.map((webhook) => webhook.body.refund_id).sort()).toEqual([first, second].sort());
    for (const webhook of webhooks) {
      expect(webhook.body).toEqual({
        type: 'refund_failed',
        event_id: expect.stringMatching(UUID),
        event_version: 1,
        payment_id: EXECUTED,
        refund_id: webhook.body.refund_id,
        failed_at: failedPayment.body.failed_at,
        failure_reason: 'payment_failed',
      });
      await expectSignedBySandbox(webhook);
    }
    expect(webhooks[0]!.body.event_id).not.toBe(webhooks[1]!.body.event_id);

    await advance(3600);
    expect((await control('GET', '/sandbox/webhooks')).body.deliveries).toHaveLength(2);
    expectProblem(
      await createRefund(EXECUTED, { reference: 'After fail' }, { bearer: (await getAppToken(sandbox, 'payments')).access_token }),
      409,
      'payment-not-refundable',
    );
  });

  it('executes refunds in the order their payments settled, not the order they were created', async () => {
    const hooks = await useListener();
    const refundA = await createdId(AUTHORIZED, { amount_in_minor: 100, reference: 'A first' });
    const refundB = await createdId(EXECUTED, { amount_in_minor: 100, reference: 'B second' });
    expect((await control('POST', `/sandbox/payments/${EXECUTED}/settle`)).status).toBe(200);
    await advance(10);
    expect((await control('POST', `/sandbox/payments/${AUTHORIZED}/settle`)).status).toBe(200);
    await advance(120);

    const executedA = Date.parse((await refundOf(AUTHORIZED, refundA)).executed_at);
    const executedB = Date.parse((await refundOf(EXECUTED, refundB)).executed_at);
    expect(executedB).toBeLessThan(executedA);
    const webhooks = await takeWebhooks(hooks, 2);
    expect(webhooks.map((webhook) => webhook.body.refund_id)).toEqual([refundB, refundA]);
  });

  it('holds back a refund of a later-settled payment behind one of an earlier-settled payment created after it', async () => {
    const hooks = await useListener();
    const late = await createdId(AUTHORIZED, { amount_in_minor: 100, reference: 'Late settle' });
    expect((await control('POST', `/sandbox/payments/${AUTHORIZED}/settle`)).status).toBe(200);
    await advance(30);
    // SETTLED settled long before AUTHORIZED did, so its refund goes first even though it is created now.
    const early = await createdId(SETTLED, { amount_in_minor: 100, reference: 'Early settle' });
    await advance(40);
    expect((await refundOf(AUTHORIZED, late)).status).toBe('authorized');
    await advance(20);
    const earlyRefund = await refundOf(SETTLED, early);
    const lateRefund = await refundOf(AUTHORIZED, late);
    expect(earlyRefund.status).toBe('executed');
    expect(lateRefund.status).toBe('executed');
    expect(Date.parse(lateRefund.executed_at)).toBeGreaterThanOrEqual(Date.parse(earlyRefund.executed_at));
    expect((await takeWebhooks(hooks, 2)).map((webhook) => webhook.body.refund_id)).toEqual([early, late]);
  });

  it('sends no webhook while no payments webhook URL is configured', async () => {
    await createdId(SETTLED, { amount_in_minor: 100, reference: 'Quiet' });
    await advance(120);
    expect((await control('GET', '/sandbox/webhooks')).body.deliveries).toEqual([]);
  });
});

describe('GET refunds', () => {
  it("lists a payment's refunds oldest first, each as GET one answers it", async () => {
    const ids: string[] = [];
    for (const reference of ['First', 'Second', 'Third']) {
      ids.push(await createdId(SETTLED, { amount_in_minor: 100, reference }));
      await advance(1);
    }
    await createdId(SETTLED_EUR, { amount_in_minor: 100, reference: 'Elsewhere' });
    const list = await listRefunds(SETTLED);
    expect(list.status).toBe(200);
    expect(Object.keys(list.body)).toEqual(['items']);
    expect(list.body.items.map((item: { id: string }) => item.id)).toEqual(ids);
    for (const item of list.body.items) expect(await refundOf(SETTLED, item.id)).toEqual(item);
    const created = list.body.items.map((item: { created_at: string }) => Date.parse(item.created_at));
    expect([...created].sort((a, b) => a - b)).toEqual(created);
  });

  it('lists no refunds as an empty items array, and 404 for an unknown payment', async () => {
    expect((await listRefunds(paymentId('settled-gbp-2'))).body).toEqual({ items: [] });
    expectProblem(await listRefunds(randomUUID()), 404, 'not-found');
  });

  it('answers 404 for an unknown refund, and for a refund of another payment', async () => {
    const id = await createdId(SETTLED, { amount_in_minor: 100, reference: 'Mine' });
    expectProblem(await getRefund(SETTLED, randomUUID()), 404, 'not-found');
    expectProblem(await getRefund(SETTLED_EUR, id), 404, 'not-found');
    expectProblem(await getRefund(randomUUID(), id), 404, 'not-found');
  });

  it('needs the token and a signature over the GET', async () => {
    const id = await createdId(SETTLED, { amount_in_minor: 100, reference: 'Guarded' });
    const path = `/v3/payments/${SETTLED}/refunds/${id}`;
    expectProblem(await send(sandbox.url, 'GET', path, { Authorization: `Bearer ${token}` }), 401, 'invalid-signature');
    const otherPath = signRequest(key, { method: 'GET', path: `/v3/payments/${SETTLED}/refunds` });
    expectProblem(await send(sandbox.url, 'GET', path, { Authorization: `Bearer ${token}`, 'Svc-Signature': otherPath }), 401, 'invalid-signature');
    const signature = signRequest(key, { method: 'GET', path });
    expectProblem(await send(sandbox.url, 'GET', path, { 'Svc-Signature': signature }), 401, 'unauthenticated');
    expect((await send(sandbox.url, 'GET', path, { Authorization: `Bearer ${token}`, 'Svc-Signature': signature })).status).toBe(200);
    expectProblem(await send(sandbox.url, 'GET', `/v3/payments/${SETTLED}/refunds`, { Authorization: `Bearer ${token}` }), 401, 'invalid-signature');
  });
});

describe('payment control routes', () => {
  it('settles only an authorized or executed payment, at sandbox now', async () => {
    await advance(100);
    const settled = await control('POST', `/sandbox/payments/${EXECUTED}/settle`);
    expect(settled.status).toBe(200);
    expect(settled.body).toMatchObject({ id: EXECUTED, status: 'settled', amount_in_minor: 8000, currency: 'GBP' });
    expect(Math.abs(Date.parse(settled.body.settled_at) - sandbox.context.clock.nowMs())).toBeLessThan(5000);

    for (const fixture of ['settled-gbp-1', 'authorization-required-gbp-1', 'authorizing-eur-1', 'failed-gbp-1']) {
      const refused = await control('POST', `/sandbox/payments/${paymentId(fixture)}/settle`);
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({ error: 'invalid_payment_status', error_description: expect.stringContaining('can settle') });
    }
  });

  it('fails only a payment that has not settled or failed', async () => {
    for (const fixture of ['authorization-required-gbp-1', 'authorizing-eur-1', 'authorized-eur-1', 'executed-eur-1']) {
      const failed = await control('POST', `/sandbox/payments/${paymentId(fixture)}/fail`);
      expect(failed.status).toBe(200);
      expect(failed.body).toMatchObject({ id: paymentId(fixture), status: 'failed', failed_at: expect.any(String) });
    }
    for (const fixture of ['settled-gbp-1', 'failed-eur-1']) {
      const refused = await control('POST', `/sandbox/payments/${paymentId(fixture)}/fail`);
      expect(refused.status).toBe(409);
      expect(refused.body.error).toBe('invalid_payment_status');
    }
  });

  it('answers 404 for an unknown payment', async () => {
    for (const action of ['settle', 'fail']) {
      const result = await control('POST', `/sandbox/payments/${randomUUID()}/${action}`);
      expect(result.status).toBe(404);
      expect(result.body.error).toBe('not_found');
    }
  });
});
