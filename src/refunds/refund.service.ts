import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { CallOptions } from '../platform/provider/http.client';
import type { PaymentsClient } from '../platform/provider/payments.client';
import type { ProviderRefund } from '../platform/provider/provider-types';
import type { Logger } from '../platform/observability/logger';
import {
  BadUserInputError,
  GatewayError,
  IdempotencyConflictError,
  NotFoundError,
  PaymentNotRefundableError,
  RefundExceedsPaymentError,
} from '../platform/errors/gateway-errors';
import { ProviderResponseError } from '../platform/provider/provider-errors';
import { refundedAmount, refundFromProvider, type PaymentRecord, type RefundEvent, type RefundRecord } from './refund.model';
import type { RefundAttempt, RefundKeyStore } from './refund-key.store';
import { refundMadeBy } from './refund-outcome';
import type { ValidRefundInput } from './refund-input.validator';

/**
 * "Still being processed" (409) means another send with this key is in flight at the provider (another gateway
 * instance, or our own first send whose answer was lost): waiting briefly and asking again gets its answer.
 */
const IN_FLIGHT_RETRIES = 4;
const IN_FLIGHT_BACKOFF_MS = 50;

/** How refunds made here reach refundUpdated subscribers (the composition root puts them on the event bus). */
export interface RefundEvents {
  /** Announces a refund to the payment's subscribers on every instance. */
  publish(event: RefundEvent): Promise<void>;
  /** A refund of the payment may have been made: an earlier read of its refunds is no longer to be shared. */
  changed(paymentId: string): void;
}

export interface RefundServiceDeps {
  payments: PaymentsClient;
  /** Refund idempotency keys and the requests made under them. */
  keys: RefundKeyStore;
  events: RefundEvents;
  /** Epoch ms; the key store's clock too. */
  clock: () => number;
  logger: Logger;
}

/**
 * Refunds of payments received into the merchant account, made and read through the payments API. Who may do this
 * (merchant keys) is decided before: the service takes validated input and answers plain records.
 */
export class RefundService {
  constructor(private readonly deps: RefundServiceDeps) {}

  /**
   * refundPayment after validation. The idempotency key is the client's, or one the gateway generated for this
   * exact request and stored before calling, so a retry of the request (its answer was lost) reuses it and the
   * provider answers the same refund. Work on one key runs under that key's lock: the same key twice at once is
   * one POST. An attempt sent before whose outcome was never heard is settled from the provider's refund list
   * before it is sent again: past the provider's 24 hours of key memory, the same key would make a second refund.
   */
  async refund(input: ValidRefundInput, options: CallOptions): Promise<RefundRecord> {
    const { keys, payments, clock } = this.deps;
    const fingerprint = fingerprintOf(input);
    const key = input.idempotencyKey ?? (await keys.generatedKeyFor(fingerprint, randomUUID));

    return keys.withKey(key, async () => {
      for (;;) {
        const { attempt, created } = await keys.record({
          idempotencyKey: key,
          fingerprint,
          paymentId: input.paymentId,
          request: input.request,
          generated: input.idempotencyKey === undefined,
          createdAt: new Date(clock()).toISOString(),
        });
        if (attempt.fingerprint !== fingerprint) {
          throw new IdempotencyConflictError(
            `idempotencyKey ${key} was already used for a different refund (${describeAttempt(attempt)}). ` +
              'Repeat that request exactly to get its refund, or use a new key for a new refund.',
          );
        }
        // Known before: answer with that refund, without a second POST.
        if (attempt.refundId) return this.answerKnown(attempt, attempt.refundId, options);
        if (!created) {
          const made = await refundMadeBy({ payments, keys }, attempt, options);
          if (made) {
            const refund = this.record(made, attempt.paymentId, options);
            if (await keys.recordRefund(attempt, made.id, { answered: true, authoritative: false })) return refund;
          }
          // Settled or forgotten by the reconciler meanwhile: start again from what is stored now.
          if (!(await keys.markSent(key))) continue;
        }
        return this.send(attempt, input, options);
      }
    });
  }

  async getRefund(paymentId: string, refundId: string, options: CallOptions): Promise<RefundRecord> {
    const refund = await this.deps.payments.getRefund(paymentId, refundId, options);
    return this.record(refund, paymentId, options);
  }

  /** The payment's refunds, oldest first; null for a payment the provider does not know. */
  async refundsOfPayment(paymentId: string, options: CallOptions): Promise<RefundRecord[] | null> {
    let items: ProviderRefund[];
    try {
      items = await this.deps.payments.listRefunds(paymentId, options);
    } catch (error) {
      if (error instanceof NotFoundError) return null;
      throw error;
    }
    return items.map((item) => this.record(item, paymentId, options));
  }

  /**
   * Query.payment: one provider call (the refund list) gives everything. The provider has no payment read, so an
   * unknown id is known only from that call's 404: null.
   */
  async payment(paymentId: string, options: CallOptions): Promise<PaymentRecord | null> {
    const refunds = await this.refundsOfPayment(paymentId, options);
    return refunds && { id: paymentId, refunds, refundedAmountInMinor: refundedAmount(refunds) };
  }

  private async send(attempt: RefundAttempt, input: ValidRefundInput, options: CallOptions): Promise<RefundRecord> {
    const { keys, payments, events } = this.deps;
    let refundId: string;
    try {
      refundId = (await this.createRefund(attempt, options)).id;
    } catch (error) {
      if (isOutrightRefusal(error)) await keys.release(attempt);
      throw await this.explainRefusal(error, input, attempt.idempotencyKey, options);
    }
    await keys.recordRefund(attempt, refundId, { answered: true, authoritative: true });
    // The provider answers only the id; the full refund (status, currency, created_at) comes from a GET.
    const refund = await payments.getRefund(attempt.paymentId, refundId, options);
    // No webhook announces a new refund: refundUpdated subscribers on every instance hear of it from here.
    await events.publish({ paymentId: attempt.paymentId.toLowerCase(), refund });
    return this.record(refund, attempt.paymentId, options);
  }

  /** A refund recorded before; the first client given it starts the key's 24 hours. */
  private async answerKnown(attempt: RefundAttempt, refundId: string, options: CallOptions): Promise<RefundRecord> {
    const refund = await this.getRefund(attempt.paymentId, refundId, options);
    if (!attempt.answered) await this.deps.keys.markAnswered(attempt.idempotencyKey);
    return refund;
  }

  private async createRefund(attempt: RefundAttempt, options: CallOptions): Promise<{ id: string }> {
    try {
      for (let retry = 0; ; retry += 1) {
        try {
          return await this.deps.payments.createRefund(attempt.paymentId, attempt.request, attempt.idempotencyKey, options);
        } catch (error) {
          if (retry >= IN_FLIGHT_RETRIES || providerSlug(error) !== 'idempotency-key-concurrency-conflict') throw error;
          await delay(IN_FLIGHT_BACKOFF_MS * 2 ** retry);
        }
      }
    } finally {
      // No webhook announces a new (pending) refund, and even a failed call may have made one: a subscription
      // opening from now on reads the payment's refunds afresh rather than sharing an earlier read.
      this.deps.events.changed(attempt.paymentId);
    }
  }

  /** An unknown provider status becomes UPSTREAM_ERROR; the log gets the value, so the status list can be extended. */
  private record(refund: ProviderRefund, paymentId: string, options: CallOptions): RefundRecord {
    try {
      return refundFromProvider(refund, paymentId);
    } catch (error) {
      this.deps.logger.error(
        { err: error, requestId: options.requestId, paymentId, refundId: refund.id, status: refund.status },
        'refund with an unknown status',
      );
      throw error;
    }
  }

  /** The provider's refusals, reworded to say which payment, which amount and what was wrong. */
  private async explainRefusal(error: unknown, input: ValidRefundInput, key: string, options: CallOptions): Promise<unknown> {
    const amount = input.request.amount_in_minor;
    const what = amount === undefined ? 'A refund of the whole payment' : `A refund of ${amount}`;
    if (error instanceof PaymentNotRefundableError) {
      return withOriginal(
        new PaymentNotRefundableError(
          `Payment ${input.paymentId} cannot be refunded: it is not authorized yet, or it has failed. Only an authorized, executed or settled payment can be refunded.`,
        ),
        error,
      );
    }
    if (error instanceof RefundExceedsPaymentError) {
      const committed = await this.committedAmount(input.paymentId, options);
      const left = leftToRefund(error);
      const detail = [
        committed === undefined ? undefined : `${committed} is already refunded or being refunded (failed refunds do not count)`,
        left === undefined ? undefined : `at most ${left} can still be refunded`,
      ].filter((part) => part !== undefined);
      return withOriginal(
        new RefundExceedsPaymentError(
          `${what} exceeds what is left to refund on payment ${input.paymentId}${detail.length > 0 ? `: ${detail.join(', ')}` : ''}. Refund a smaller amount.`,
        ),
        error,
      );
    }
    if (error instanceof NotFoundError) {
      return withOriginal(new NotFoundError(`No payment with id ${input.paymentId} exists at the provider.`), error);
    }
    if (error instanceof IdempotencyConflictError && providerSlug(error) === 'idempotency-key-reuse') {
      return withOriginal(
        new IdempotencyConflictError(
          `The provider already has idempotencyKey ${key} for a different refund request. Repeat that request exactly, or use a new key for a new refund.`,
        ),
        error,
      );
    }
    return error;
  }

  /** The non-failed refunds of the payment, for the message; undefined if they cannot be read right now. */
  private async committedAmount(paymentId: string, options: CallOptions): Promise<number | undefined> {
    try {
      const refunds = await this.deps.payments.listRefunds(paymentId, options);
      return refunds.filter((refund) => refund.status !== 'failed').reduce((sum, refund) => sum + refund.amount_in_minor, 0);
    } catch {
      return undefined;
    }
  }
}

/** The payment, the amount (or its absence: the whole payment) and the reference: what the provider compares too. */
function fingerprintOf(input: ValidRefundInput): string {
  const canonical = JSON.stringify([input.paymentId, input.request.amount_in_minor ?? null, input.request.reference]);
  return createHash('sha256').update(canonical).digest('base64url');
}

function describeAttempt(attempt: RefundAttempt): string {
  const amount = attempt.request.amount_in_minor === undefined ? 'the whole payment' : `${attempt.request.amount_in_minor}`;
  return `payment ${attempt.paymentId}, amount ${amount}, reference ${JSON.stringify(attempt.request.reference)}`;
}

/** The problem+json slug behind a mapped error, when the provider sent one. */
function providerSlug(error: unknown): string | undefined {
  const original = error instanceof GatewayError ? error.originalError : undefined;
  const type = original instanceof ProviderResponseError ? (original.body as { type?: unknown } | undefined)?.type : undefined;
  return typeof type === 'string' ? type.slice(type.lastIndexOf('#') + 1) : undefined;
}

/**
 * The provider refused and remembered nothing under the key (README: only accepted requests are remembered), so
 * the key is free again; a refusal for a request in flight elsewhere is not one.
 */
function isOutrightRefusal(error: unknown): boolean {
  if (error instanceof IdempotencyConflictError) return providerSlug(error) === 'idempotency-key-reuse';
  return (
    error instanceof PaymentNotRefundableError ||
    error instanceof RefundExceedsPaymentError ||
    error instanceof NotFoundError ||
    error instanceof BadUserInputError
  );
}

/** The provider has no payment read, so what is left is known only if its refusal says ("at most N"). */
function leftToRefund(error: GatewayError): number | undefined {
  const original = error.originalError;
  const detail = original instanceof ProviderResponseError ? (original.body as { detail?: unknown } | undefined)?.detail : undefined;
  const match = typeof detail === 'string' ? /at most (\d+)/i.exec(detail) : null;
  return match ? Number(match[1]) : undefined;
}

/** The reworded error keeps the provider's answer for the log, as the original did. */
function withOriginal<E extends GatewayError>(error: E, from: GatewayError): E {
  Object.defineProperty(error, 'originalError', { value: from.originalError, enumerable: false, writable: true, configurable: true });
  return error;
}
