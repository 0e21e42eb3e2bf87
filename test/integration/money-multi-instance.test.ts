import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { loadConfig, withProvider } from '../../src/platform/config/config';
import { pointSandboxWebhooksAt, startEmbeddedSandbox } from '../../src/embedded-sandbox';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import type { Sandbox } from '../../src/sandbox/sandbox';
import { createGateway, type Gateway } from '../../src/app/gateway';
import pg from 'pg';
import {
  CREATE_PAYOUT,
  dataOf,
  ibanOf,
  paymentsIn,
  REFUND_PAYMENT,
  user,
  VERIFY,
  VIEWER_MONEY,
  type LedgerEntry,
  type LoggedRequest,
  type PayoutView,
  type RefundView,
} from '../helpers/money';
import { createPostgresSchema, POSTGRES_URL, type PostgresSchema } from '../helpers/postgres';
import { graphqlAt, MERCHANT_KEY, oneDeploymentEnv, sandboxJsonAt, signInAt, type GraphQLResult } from '../helpers/stack';
import { requireRedis } from '../helpers/redis';
import { waitFor } from '../helpers/wait-for';

/*
 * Money on two gateway instances, A and B, sharing one PostgreSQL schema (STORE_URL) and one Redis (CACHE_URL,
 * PUBSUB_URL), in front of one sandbox. PostgreSQL and Redis must be running on 127.0.0.1 (.ci/run starts them);
 * without them these tests fail with a message saying so, they are never skipped.
 */

const PREFIX = `bankgraph-money-${randomUUID().slice(0, 8)}:`;

describe('money on two gateway instances sharing PostgreSQL and Redis', () => {
  let schema: PostgresSchema;
  let sandbox: Sandbox;
  let a: Gateway;
  let b: Gateway;
  let seeded: Fixtures;
  /** Both instances' clocks run this far ahead of the wall clock. */
  let refundClockOffsetMs = 0;

  beforeAll(async () => {
    await requireRedis('The money multi-instance tests');
    schema = await createPostgresSchema('money_multi');
    const base = loadConfig({
      ...oneDeploymentEnv(schema.url, PREFIX),
      // At the daily cap: no payout here waits for approval, so the provider's ledger shows every one admitted.
      PAYOUT_APPROVAL_ABOVE_MINOR: '500000',
    });
    const started = await startEmbeddedSandbox(base);
    sandbox = started.sandbox;
    const config = withProvider(base, started.provider);
    const clock = () => Date.now() + refundClockOffsetMs;
    a = await createGateway(config, { clock });
    b = await createGateway(config, { clock });
    await pointSandboxWebhooksAt(sandbox.url, a.url);
    seeded = await sandboxJson<Fixtures>('GET', '/sandbox/fixtures');
  });

  afterAll(async () => {
    await Promise.allSettled([a?.close(), b?.close()]);
    await sandbox?.close();
    await schema?.drop();
  });

  function sandboxJson<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    return sandboxJsonAt<T>(sandbox.url, method, path, body);
  }

  function graphql<T>(gateway: Gateway, query: string, variables: Record<string, unknown>, token: string): Promise<GraphQLResult<T>> {
    return graphqlAt<T>(gateway.url, query, variables, token);
  }

  /** Withdrawal POSTs the sandbox received so far (the tests in this file run one after another). */
  async function withdrawalPosts(): Promise<number> {
    const { requests } = await sandboxJson<{ requests: LoggedRequest[] }>('GET', '/sandbox/requests');
    return requests.filter((request) => request.method === 'POST' && request.path === '/v1/withdrawals').length;
  }

  async function withdrawalsOf(transactionIds: readonly string[]): Promise<LedgerEntry[]> {
    const { withdrawals } = await sandboxJson<{ withdrawals: LedgerEntry[] }>('GET', '/sandbox/ledger');
    return withdrawals.filter((entry) => transactionIds.includes(entry.id));
  }

  function input(iban: string, name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return { beneficiaryName: name, beneficiaryIban: iban, beneficiaryReference: 'Two instances', amountInMinor: 1_000, currency: 'GBP', ...overrides };
  }

  it('uses on B a beneficiary verified on A, and lists 20 payouts split across both on both, each sent once', async () => {
    const session = await signInAt(a.url, 'john', 'doe');
    dataOf(await graphql(a, VERIFY, { name: 'John Doe' }, session));
    const iban = ibanOf(user(seeded, 'john'));
    const ids = Array.from({ length: 20 }, () => randomUUID());
    const before = await withdrawalPosts();
    const created = await Promise.all(
      ids.map((transactionId, index) =>
        graphql<{ createPayout: PayoutView }>(
          index % 2 ? b : a,
          CREATE_PAYOUT,
          { input: input(iban, 'John Doe', { transactionId, beneficiaryReference: `Split ${index}` }) },
          session,
        ),
      ),
    );
    expect(created.map((result) => dataOf(result).createPayout.status)).toEqual(ids.map(() => 'authorised'));
    for (const gateway of [a, b]) {
      const listed = dataOf(await graphql<{ viewer: { payouts: PayoutView[] } }>(gateway, VIEWER_MONEY, {}, session)).viewer.payouts;
      expect(listed.map((payout) => payout.transactionId).sort()).toEqual([...ids].sort());
    }
    expect((await withdrawalPosts()) - before).toBe(20);
    expect(await withdrawalsOf(ids)).toHaveLength(20);
  });

  it('sends one withdrawal for the same transactionId sent to both instances at once', async () => {
    const session = await signInAt(b.url, 'john', 'doe');
    const iban = ibanOf(user(seeded, 'john'));
    const transactionId = randomUUID();
    const payout = input(iban, 'John Doe', { transactionId, beneficiaryReference: 'Same id' });
    const before = await withdrawalPosts();
    const answers = await Promise.all([a, b, a, b].map((gateway) => graphql<{ createPayout: PayoutView }>(gateway, CREATE_PAYOUT, { input: payout }, session)));
    expect(answers.map((answer) => dataOf(answer).createPayout.transactionId)).toEqual([transactionId, transactionId, transactionId, transactionId]);
    expect((await withdrawalPosts()) - before).toBe(1);
    expect(await withdrawalsOf([transactionId])).toHaveLength(1);
  });

  it('never lets parallel payouts on both instances exceed the daily limit', async () => {
    const session = await signInAt(a.url, 'jane', 'doe');
    const jane = user(seeded, 'jane');
    dataOf(await graphql(b, VERIFY, { name: jane.name }, session));
    const iban = ibanOf(jane);
    const ids = Array.from({ length: 14 }, () => randomUUID());
    const answers = await Promise.all(
      ids.map((transactionId, index) =>
        graphql<{ createPayout: PayoutView }>(
          index % 2 ? b : a,
          CREATE_PAYOUT,
          { input: input(iban, jane.name, { transactionId, amountInMinor: 50_000, beneficiaryReference: `Race ${index}` }) },
          session,
        ),
      ),
    );
    const paid = answers.filter((answer) => answer.data?.createPayout);
    const refused = answers.filter((answer) => answer.errors?.[0]?.extensions?.code === 'PAYOUT_LIMIT_EXCEEDED');
    expect(paid).toHaveLength(10);
    expect(refused).toHaveLength(4);
    const sent = await withdrawalsOf(ids);
    expect(sent.reduce((sum, entry) => sum + entry.amount_in_minor, 0)).toBe(500_000);
  });

  async function refundsOf(paymentId: string): Promise<LedgerEntry[]> {
    const { refunds } = await sandboxJson<{ refunds: LedgerEntry[] }>('GET', '/sandbox/ledger');
    return refunds.filter((entry) => entry.paymentId === paymentId);
  }

  // Two identical items refunded under two keys: the first request's sends never reach the provider (on A), the
  // second's are made but answered 503 (on B); then both are retried.
  it.each([
    ['retried on the other instance, the first request before the second', 0, 'one after the other'],
    ['retried at once, each on the other instance', 1, 'at once'],
    ['retried after the reconciler looked at both', 0, 'after the reconciler'],
  ] as const)('keeps two refunds of the same amount and reference two when %s', async (_case, index, how) => {
    const payment = paymentsIn(seeded, 'settled', 5)[index]!;
    const item = { paymentId: payment.id, amountInMinor: 35, reference: `Twin ${how}`.slice(0, 18) };
    const first = { ...item, idempotencyKey: randomUUID() };
    const second = { ...item, idempotencyKey: randomUUID() };
    const refundOn = (gateway: Gateway, input: Record<string, unknown>) =>
      graphql<{ refundPayment: RefundView }>(gateway, REFUND_PAYMENT, { input }, MERCHANT_KEY);
    const before = await refundsOf(payment.id);

    await sandboxJson('POST', '/sandbox/faults', { match: 'POST /v3/payments/*/refunds', reset: true, times: 3 });
    expect((await refundOn(a, first)).errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    await sandboxJson('DELETE', '/sandbox/faults');
    await sandboxJson('POST', '/sandbox/faults', { match: 'POST /v3/payments/*/refunds', afterProcessing: true, status: 503, times: 3 });
    expect((await refundOn(b, second)).errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    await sandboxJson('DELETE', '/sandbox/faults');
    expect(await refundsOf(payment.id)).toHaveLength(before.length + 1);

    let ids: string[];
    if (how === 'at once') {
      const answers = await Promise.all([refundOn(b, first), refundOn(a, second)]);
      ids = answers.map((answer) => dataOf(answer).refundPayment.id);
    } else {
      if (how === 'after the reconciler') {
        // Both clocks move, so the refunds' times and the attempts' stay as close as they were.
        await sandboxJson('POST', '/sandbox/clock', { advanceSeconds: 6 * 60 });
        refundClockOffsetMs += 6 * 60 * 1000;
        expect((await a.scheduler.runOnce()) || (await b.scheduler.runOnce())).toBe(true);
      }
      ids = [dataOf(await refundOn(b, first)).refundPayment.id, dataOf(await refundOn(a, second)).refundPayment.id];
    }

    expect(new Set(ids).size).toBe(2);
    const held = (await refundsOf(payment.id)).filter((entry) => !before.some((earlier) => earlier.id === entry.id));
    expect(held.map((entry) => entry.id).sort()).toEqual([...ids].sort());
    // Each request, asked again on either instance, is still answered its own refund.
    expect(dataOf(await refundOn(a, first)).refundPayment.id).toBe(ids[0]);
    expect(dataOf(await refundOn(b, second)).refundPayment.id).toBe(ids[1]);
    expect(await refundsOf(payment.id)).toHaveLength(before.length + 2);
  });

  it('answers 50 concurrent keyless refunds of one payment across both instances without INTERNAL_SERVER_ERROR or over-refunding', async () => {
    const payment = paymentsIn(seeded, 'settled', 5)[3]!;
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        graphql<{ refundPayment: RefundView }>(
          index % 2 ? b : a,
          REFUND_PAYMENT,
          { input: { paymentId: payment.id, amountInMinor: 10 + index, reference: `Part ${index}` } },
          MERCHANT_KEY,
        ),
      ),
    );
    const codes = answers.flatMap((answer) => (answer.errors ?? []).map((error) => error.extensions?.code));
    expect(codes).toEqual([]);
    const refunded = await refundsOf(payment.id);
    expect(refunded).toHaveLength(50);
    expect(refunded.reduce((sum, entry) => sum + entry.amount_in_minor, 0)).toBeLessThanOrEqual(payment.amount_in_minor);
    expect(answers.map((answer) => dataOf(answer).refundPayment.id).sort()).toEqual(refunded.map((entry) => entry.id).sort());
  });

  it('keeps the first request stored under an idempotency key sent with different amounts to both instances, and quotes it in every conflict', async () => {
    const payment = paymentsIn(seeded, 'settled', 5)[4]!;
    const idempotencyKey = randomUUID();
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    try {
      // Writes to the refund keys wait behind this lock (reads do not), so each instance has read "no such key"
      // before either writes: the moment two instances race to store different requests under one key.
      await admin.query('BEGIN');
      await admin.query(`LOCK TABLE ${schema.name}.refund_keys IN EXCLUSIVE MODE`);
      const amounts = [101, 202, 303, 404];
      const pending = amounts.map((amountInMinor, index) =>
        graphql<{ refundPayment: RefundView }>(
          index % 2 ? b : a,
          REFUND_PAYMENT,
          { input: { paymentId: payment.id, amountInMinor, reference: 'One key', idempotencyKey } },
          MERCHANT_KEY,
        ),
      );
      await waitFor(async () => {
        const { rows } = await admin.query<{ waiting: string }>(
          `SELECT count(*) AS waiting FROM pg_locks l JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = $1 AND c.relname = 'refund_keys' AND NOT l.granted`,
          [schema.name],
        );
        return Number(rows[0]!.waiting) >= 2 || undefined;
      }, 'both instances waiting to store a request under the key');
      await admin.query('COMMIT');
      const answers = await Promise.all(pending);

      const refunded = await refundsOf(payment.id);
      expect(refunded).toHaveLength(1);
      const first = refunded[0]!.amount_in_minor;
      const stored = await admin.query<{ request: string }>(`SELECT request FROM ${schema.name}.refund_keys WHERE idempotency_key = $1`, [idempotencyKey]);
      expect(JSON.parse(stored.rows[0]!.request)).toEqual({ amount_in_minor: first, reference: 'One key' });

      const succeeded = answers.filter((answer) => answer.data?.refundPayment);
      expect(succeeded.map((answer) => answer.data!.refundPayment.amountInMinor)).toEqual([first]);
      const conflicts = answers.filter((answer) => answer.errors);
      expect(conflicts).toHaveLength(3);
      for (const conflict of conflicts) {
        expect(conflict.errors![0]!.extensions?.code).toBe('IDEMPOTENCY_CONFLICT');
        expect(conflict.errors![0]!.message).toContain(`payment ${payment.id}, amount ${first}, reference "One key"`);
      }
    } finally {
      await admin.query('ROLLBACK').catch(() => undefined);
      await admin.end();
    }
  });

  it('settles keyless refunds whose answers were lost on A, by the reconciler or by a retry on B 25 hours later, with no second refund', async () => {
    const payment = paymentsIn(seeded, 'settled', 5)[2]!;
    const refundOn = (gateway: Gateway, reference: string) =>
      graphql<{ refundPayment: RefundView }>(gateway, REFUND_PAYMENT, { input: { paymentId: payment.id, amountInMinor: 10, reference } }, MERCHANT_KEY);
    const loseEveryAnswer = async (reference: string) => {
      await sandboxJson('POST', '/sandbox/faults', { match: 'POST /v3/payments/*/refunds', afterProcessing: true, status: 503, times: 3 });
      expect((await refundOn(a, reference)).errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      await sandboxJson('DELETE', '/sandbox/faults');
    };
    await loseEveryAnswer('Lost on A');
    // Six minutes on, the reconciler (on whichever instance holds its lease) settles it from the refund list.
    refundClockOffsetMs += 6 * 60 * 1000;
    expect((await a.scheduler.runOnce()) || (await b.scheduler.runOnce())).toBe(true);
    // This one only the retry settles.
    await loseEveryAnswer('Lost on A again');
    const made = await refundsOf(payment.id);
    expect(made).toHaveLength(2);

    // Past the provider's key memory: the first is answered from what the reconciler recorded (the list is down),
    // the second from the refund list.
    await sandboxJson('POST', '/sandbox/clock', { advanceSeconds: 25 * 3600 });
    refundClockOffsetMs += 25 * 3600 * 1000;
    await sandboxJson('POST', '/sandbox/faults', { match: 'GET /v3/payments/*/refunds', status: 503 });
    const first = dataOf(await refundOn(b, 'Lost on A')).refundPayment;
    await sandboxJson('DELETE', '/sandbox/faults');
    const second = dataOf(await refundOn(b, 'Lost on A again')).refundPayment;
    expect([first.id, second.id].sort()).toEqual(made.map((entry) => entry.id).sort());
    expect(await refundsOf(payment.id)).toHaveLength(2);
  });

  it('runs the reconciler on one instance at a time (its database lease)', async () => {
    const passes = await Promise.all([a.scheduler.runOnce(), b.scheduler.runOnce(), a.scheduler.runOnce(), b.scheduler.runOnce()]);
    const ranOn = new Set(passes.map((ran, index) => (ran ? ['a', 'b'][index % 2] : undefined)).filter(Boolean));
    expect(ranOn.size).toBe(1);
  });
});
