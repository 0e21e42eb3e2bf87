import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { RefundService } from '../../src/refunds/refund.service';
import { RefundKeyStore } from '../../src/refunds/refund-key.store';
import type { RefundEvent } from '../../src/refunds/refund.model';
import { openDatabase, type Database } from '../../src/platform/db/database';
import { IdempotencyConflictError, NotFoundError } from '../../src/platform/errors/gateway-errors';
import { ProviderResponseError } from '../../src/platform/provider/provider-errors';
import type { Logger } from '../../src/platform/observability/logger';
import type { PaymentsClient } from '../../src/platform/provider/payments.client';
import type { ProviderRefund, ProviderRefundRequest } from '../../src/platform/provider/provider-types';

/** The provider's 409 for a key whose first request it is still processing. */
function stillProcessing(): IdempotencyConflictError {
  const body = { type: 'https://provider.example/errors#idempotency-key-concurrency-conflict', detail: 'still processing' };
  return new IdempotencyConflictError(
    'still processing',
    {},
    { originalError: new ProviderResponseError('payments.createRefund', 409, body, undefined, undefined) },
  );
}

/** The payments API's refunds: one per idempotency key, `busyFor` answers of "still processing" before the first. */
function fakePayments(busyFor = 0) {
  const refunds = new Map<string, ProviderRefund>();
  const byKey = new Map<string, string>();
  let busy = busyFor;
  return {
    refunds,
    createRefund: jest.fn(async (_paymentId: string, request: ProviderRefundRequest, key: string) => {
      if (busy > 0) {
        busy -= 1;
        throw stillProcessing();
      }
      const known = byKey.get(key);
      if (known) return { id: known };
      const id = randomUUID();
      byKey.set(key, id);
      refunds.set(id, {
        id,
        amount_in_minor: request.amount_in_minor ?? 500,
        currency: 'GBP',
        reference: request.reference,
        status: 'pending',
        created_at: '2026-01-01T00:00:00.000Z',
      } as ProviderRefund);
      return { id };
    }),
    getRefund: jest.fn(async (_paymentId: string, refundId: string) => {
      const refund = refunds.get(refundId);
      if (!refund) throw new NotFoundError('No refund with that id.');
      return refund;
    }),
    listRefunds: jest.fn(async () => [...refunds.values()]),
  };
}

describe('RefundService, over a SQLite key store and fakes of the payments API and the bus', () => {
  let directory: string;
  let database: Database;
  let published: RefundEvent[];
  let changed: string[];
  const logger = { info: jest.fn(), warn: jest.fn(), error: jest.fn() } as unknown as Logger;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'bankgraph-refund-service-'));
    database = await openDatabase(`sqlite://${join(directory, 'store.sqlite')}`);
  });

  afterAll(async () => {
    await database?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  function serviceOver(payments: ReturnType<typeof fakePayments>): RefundService {
    published = [];
    changed = [];
    return new RefundService({
      payments: payments as unknown as PaymentsClient,
      keys: new RefundKeyStore(database),
      events: { publish: async (event) => void published.push(event), changed: (paymentId) => void changed.push(paymentId) },
      clock: Date.now,
      logger,
    });
  }

  const input = (idempotencyKey: string | undefined = randomUUID()) => ({
    paymentId: randomUUID(),
    request: { amount_in_minor: 500, reference: 'sorry' },
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
  });

  it('makes one refund per key, announces it once, and answers a repeat without a second POST', async () => {
    const payments = fakePayments();
    const service = serviceOver(payments);
    const asked = input();
    const refund = await service.refund(asked, {});
    expect(refund).toMatchObject({ paymentId: asked.paymentId, amountInMinor: 500, status: 'PENDING', reference: 'sorry' });
    expect(published).toEqual([{ paymentId: asked.paymentId, refund: payments.refunds.get(refund.id) }]);
    expect(changed).toEqual([asked.paymentId]);
    const onRepeat = jest.fn();
    expect(await service.refund(asked, {}, onRepeat)).toEqual(refund);
    expect(onRepeat).toHaveBeenCalledTimes(1);
    expect(payments.createRefund).toHaveBeenCalledTimes(1);
    expect(published).toHaveLength(1);
  });

  it('refuses the same key for a different refund before any call to the provider', async () => {
    const payments = fakePayments();
    const service = serviceOver(payments);
    const asked = input();
    await service.refund(asked, {});
    await expect(service.refund({ ...asked, request: { ...asked.request, amount_in_minor: 600 } }, {})).rejects.toMatchObject({
      extensions: { code: 'IDEMPOTENCY_CONFLICT' },
      message: expect.stringContaining(`idempotencyKey ${asked.idempotencyKey} was already used for a different refund`),
    });
    expect(payments.createRefund).toHaveBeenCalledTimes(1);
  });

  it('asks again while the provider is still processing the key, four times at most', async () => {
    const patient = fakePayments(4);
    expect(await serviceOver(patient).refund(input(), {})).toMatchObject({ status: 'PENDING' });
    expect(patient.createRefund).toHaveBeenCalledTimes(5);

    const stuck = fakePayments(5);
    await expect(serviceOver(stuck).refund(input(), {})).rejects.toBeInstanceOf(IdempotencyConflictError);
    expect(stuck.createRefund).toHaveBeenCalledTimes(5);
  });

  it('reuses the key it generated for a request sent again without one', async () => {
    const payments = fakePayments();
    const service = serviceOver(payments);
    const asked = input(undefined);
    const first = await service.refund(asked, {});
    expect(await service.refund(asked, {})).toEqual(first);
    expect(payments.createRefund).toHaveBeenCalledTimes(1);
  });

  it('reads a payment’s refunds, and a payment the provider does not know as null', async () => {
    const payments = fakePayments();
    const service = serviceOver(payments);
    const asked = input();
    const refund = await service.refund(asked, {});
    expect(await service.payment(asked.paymentId, {})).toEqual({ id: asked.paymentId, refunds: [refund], refundedAmountInMinor: 500 });
    payments.listRefunds.mockRejectedValueOnce(new NotFoundError('No payment with that id.'));
    expect(await service.payment(randomUUID(), {})).toBeNull();
  });
});
