import { randomUUID } from 'node:crypto';
import { openDatabase, type Database } from '../../../src/platform/db/database';
import { RefundKeyStore, type ClaimSource, type RefundAttempt } from '../../../src/refunds/refund-key.store';
import { storeBackends } from '../../helpers/store-backends';

const BACKENDS = storeBackends('refund_keys');

describe.each(BACKENDS)('refund claims in the key store on $name', (backend) => {
  let cleanUp: () => Promise<void>;
  let database: Database;
  let keys: RefundKeyStore;
  let conflicts: ClaimSource[];
  let warnings: { fields: unknown; message: string }[];

  beforeAll(async () => {
    let url: string;
    ({ url, cleanUp } = await backend.open());
    database = await openDatabase(url);
  });

  beforeEach(() => {
    conflicts = [];
    warnings = [];
    const logger = { warn: (fields: unknown, message: string) => warnings.push({ fields, message }) } as never;
    keys = new RefundKeyStore(database, Date.now, { logger, onClaimConflict: (claim) => conflicts.push(claim) });
  });

  afterAll(async () => {
    await database?.close();
    await cleanUp?.();
  });

  /** An attempt to refund 450 of `paymentId` with reference 'Item', stored as a request would store it. */
  async function pending(paymentId: string): Promise<RefundAttempt> {
    const { attempt } = await keys.record({
      idempotencyKey: randomUUID(),
      fingerprint: `${paymentId}-item`,
      paymentId,
      request: { amount_in_minor: 450, reference: 'Item' },
      generated: false,
      createdAt: new Date().toISOString(),
    });
    return attempt;
  }

  it.each([['provider_answer'], ['refund_list']] as const)(
    'leaves a refund with the key that holds it when another claims it (%s), keeps the later pending, and reports the conflict',
    async (source) => {
      const paymentId = randomUUID();
      const [first, later] = [await pending(paymentId), await pending(paymentId)];
      const refundId = randomUUID();
      expect(await keys.recordRefund(first!, refundId, { answered: true, source: 'refund_list' })).toBe(refundId);

      expect(await keys.recordRefund(later!, refundId, { answered: true, source })).toBeUndefined();

      expect(await keys.get(first!.idempotencyKey)).toMatchObject({ refundId, answered: true });
      const stillPending = await keys.get(later!.idempotencyKey);
      expect(stillPending?.refundId).toBeUndefined();
      expect((await keys.unsettled(Date.now(), 100)).map((attempt) => attempt.idempotencyKey)).toContain(later!.idempotencyKey);
      expect(conflicts).toEqual([source]);
      expect(warnings).toEqual([
        {
          fields: { claim: source, paymentId, refundId, idempotencyKey: later!.idempotencyKey, heldBy: first!.idempotencyKey },
          message: expect.stringContaining('refund claim conflict'),
        },
      ]);
    },
  );

  it('records a refund under a key once: the same refund again is no conflict, and a key holding one keeps it', async () => {
    const paymentId = randomUUID();
    const attempt = await pending(paymentId);
    const refundId = randomUUID();
    expect(await keys.recordRefund(attempt, refundId, { answered: false, source: 'refund_list' })).toBe(refundId);
    expect(await keys.recordRefund(attempt, refundId, { answered: true, source: 'provider_answer' })).toBe(refundId);
    expect(conflicts).toEqual([]);

    const other = randomUUID();
    expect(await keys.recordRefund(attempt, other, { answered: true, source: 'refund_list' })).toBe(refundId);
    expect(conflicts).toEqual([]);
    // The provider's own answer naming another refund contradicts the match: reported, and the match stays.
    expect(await keys.recordRefund(attempt, other, { answered: true, source: 'provider_answer' })).toBe(refundId);
    expect(conflicts).toEqual(['provider_answer']);
    expect(warnings[0]?.fields).toEqual({ claim: 'provider_answer', paymentId, refundId: other, idempotencyKey: attempt.idempotencyKey, keyHolds: refundId });
    expect((await keys.attemptsOfPayment(paymentId)).map((stored) => stored.refundId)).toEqual([refundId]);
  });

  it('keeps a refund a client was given answered when the reconciler records it again', async () => {
    const attempt = await pending(randomUUID());
    const refundId = randomUUID();
    await keys.recordRefund(attempt, refundId, { answered: true, source: 'provider_answer' });
    await keys.recordRefund(attempt, refundId, { answered: false, source: 'refund_list' });
    expect(await keys.get(attempt.idempotencyKey)).toMatchObject({ refundId, answered: true });
  });
});
