import type Keyv from 'keyv';
import type { ProviderRefundRequest } from '../datasources/provider-types';
import { KeyedMutex } from './keyed-mutex';

/**
 * How long the gateway remembers a refund request's idempotency key: the provider remembers keys for 24 hours
 * (docs/provider-choices.md, Refunds and payments), and a key the provider has forgotten no longer protects anything.
 */
export const REFUND_KEY_TTL_MS = 24 * 3600 * 1000;

/** One refund request under one idempotency key, written before the provider is called. */
export interface RefundAttempt {
  idempotencyKey: string;
  /** What makes two requests "the same": the payment, the amount (or its absence) and the reference. */
  fingerprint: string;
  paymentId: string;
  request: ProviderRefundRequest;
  /** True when the gateway chose the key because the client sent none. */
  generated: boolean;
  createdAt: string;
  /** Set once the provider has accepted the refund (202 { id }). */
  refundId?: string;
}

type StoredValue = RefundAttempt | string;

/**
 * Refund idempotency keys, durable (STORE_URL).
 * - `key:<idempotencyKey>` is the request made under a key, so the same key with another request is refused before
 *   any provider call, and a key whose refund is known answers without a second POST.
 * - `auto:<fingerprint>` is the key the gateway generated for a request that came without one, stored before the
 *   provider call, so a retry of that request (the client never heard back) reuses it instead of refunding twice.
 * `withKey` serialises work on one key (or one fingerprint) in this process.
 */
export class RefundKeyStore {
  private readonly mutex = new KeyedMutex();

  constructor(private readonly keyv: Keyv<StoredValue>) {}

  withKey<T>(idempotencyKey: string, work: () => Promise<T>): Promise<T> {
    return this.mutex.run(`key:${idempotencyKey}`, work);
  }

  /** The key already generated for this request, or `generate()`'s, stored first; atomic per fingerprint in-process. */
  generatedKeyFor(fingerprint: string, generate: () => string): Promise<string> {
    const storeKey = `auto:${fingerprint}`;
    return this.mutex.run(storeKey, async () => {
      const known = (await this.keyv.get(storeKey)) as string | undefined;
      if (known) return known;
      const key = generate();
      await this.keyv.set(storeKey, key, REFUND_KEY_TTL_MS);
      return key;
    });
  }

  async get(idempotencyKey: string): Promise<RefundAttempt | undefined> {
    return (await this.keyv.get(`key:${idempotencyKey}`)) as RefundAttempt | undefined;
  }

  async put(attempt: RefundAttempt): Promise<void> {
    const left = Date.parse(attempt.createdAt) + REFUND_KEY_TTL_MS - Date.now();
    await this.keyv.set(`key:${attempt.idempotencyKey}`, attempt, Math.max(1_000, left));
  }

  /** A request the provider refused outright was not remembered there either, so the key is free again. */
  async release(idempotencyKey: string): Promise<void> {
    await this.keyv.delete(`key:${idempotencyKey}`);
  }
}
