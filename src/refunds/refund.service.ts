import { createHash, randomUUID } from 'node:crypto';
import { ExponentialBackoff, handleWhen, noJitterGenerator, retry } from 'cockatiel';
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
  TryAgainError,
} from '../platform/errors/gateway-errors';
import { ProviderResponseError } from '../platform/provider/provider-errors';
import { refundedAmount, refundFromProvider, type PaymentRecord, type RefundEvent, type RefundRecord } from './refund.model';
import type { RefundAttempt, RefundKeyStore } from './refund-key.store';
import { decideOutcome, KEY_MEMORY_MARGIN_MS, keySurelyRemembered, PROVIDER_KEY_MEMORY_MS, readOutcomeEvidence, type OutcomeDecision } from './refund-outcome';
import type { ValidRefundInput } from './refund-input.validator';

/**
 * "Still being processed" (409) means another send with this key is in flight at the provider (another gateway
 * instance, or our own first send whose answer was lost): waiting briefly and asking again gets its answer.
 */
const whileInFlight = retry(
  handleWhen((error) => providerSlug(error) === 'idempotency-key-concurrency-conflict'),
  { maxAttempts: 4, backoff: new ExponentialBackoff({ generator: noJitterGenerator, initialDelay: 50 }) },
);

/** How many times a retry looks at its attempt again when it changed under it (claimed, settled) before giving up. */
const MAX_LOOKS = 4;

const SEND_AGAIN = 'Nothing was sent; send the same request again with the same idempotencyKey (a new key would refund again).';

/** What the reconciler made of a quiet attempt: its refund found, none made (forgotten), or left for later. */
export type QuietAttemptOutcome = { kind: 'found'; refundId: string } | { kind: 'not_made' } | { kind: 'left' };

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
   * one POST. An attempt sent before whose outcome was never heard is settled by what is certain
   * (refund-outcome.ts): while the provider surely remembers its key it is sent again under it; past that, it is
   * matched in the payment's refund list, since the same key would then make a second refund. `onRepeat` is called
   * when the answer is a refund recorded before under the key (known, or found in the list).
   */
  async refund(input: ValidRefundInput, options: CallOptions, onRepeat: () => void = () => {}): Promise<RefundRecord> {
    const { keys, clock } = this.deps;
    const fingerprint = fingerprintOf(input);
    const key = input.idempotencyKey ?? (await keys.generatedKeyFor(fingerprint, randomUUID));

    return keys.withKey(key, async () => {
      for (let look = 1; ; look += 1) {
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
        if (attempt.refundId) {
          onRepeat();
          return this.answerKnown(attempt, attempt.refundId, options);
        }
        if (!created) {
          // Each look again follows a change under it (settled elsewhere, its match claimed): they do not go on forever.
          if (look > MAX_LOOKS) throw new TryAgainError(`The refund under idempotencyKey ${key} changed while it was being settled. ${SEND_AGAIN}`, 1);
          const decision = await this.decide(attempt, options);
          if (decision.kind === 'adopt') {
            const stored = await keys.recordRefund(attempt, decision.refund.id, { answered: true, source: 'refund_list' });
            if (stored === decision.refund.id) {
              onRepeat();
              return this.record(decision.refund, attempt.paymentId, options);
            }
            continue;
          }
          if (decision.kind === 'undecided') throw undecided(attempt, decision.retryAtMs - clock());
          if (!(await keys.markSent(key))) continue;
        }
        return this.send(attempt, input, options);
      }
    });
  }

  /**
   * The reconciler's settling of an attempt nobody has sent since `sentBefore`, by the same rule as a retry's: the
   * provider's answer under its key while the key is surely remembered (sent again only when the refund list shows
   * a refund it may have made; with none, it made none), a match past that. Throws when the provider cannot be
   * read or asked now; the attempt is then looked at again on the next pass.
   */
  async settleQuietAttempt(attempt: RefundAttempt, sentBefore: number, options: CallOptions): Promise<QuietAttemptOutcome> {
    const { keys, clock } = this.deps;
    return keys.withKey(attempt.idempotencyKey, async () => {
      const decision = decideOutcome(attempt, await readOutcomeEvidence(this.deps, attempt, options), clock());
      switch (decision.kind) {
        case 'not-made':
          return (await keys.release(attempt, sentBefore)) ? { kind: 'not_made' } : { kind: 'left' };
        case 'undecided':
          return { kind: 'left' };
        case 'adopt': {
          const stored = await keys.recordRefund(attempt, decision.refund.id, { answered: false, source: 'refund_list' });
          return stored === decision.refund.id ? { kind: 'found', refundId: stored } : { kind: 'left' };
        }
        case 'ask-provider':
          return this.askProvider(attempt, options);
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
    const stored = await keys.recordRefund(attempt, refundId, { answered: true, source: 'provider_answer' });
    if (stored === undefined) throw claimedElsewhere(attempt, refundId);
    // The provider answers only the id; the full refund (status, currency, created_at) comes from a GET.
    const refund = await payments.getRefund(attempt.paymentId, stored, options);
    // No webhook announces a new refund: refundUpdated subscribers on every instance hear of it from here.
    if (stored === refundId) await events.publish({ paymentId: attempt.paymentId.toLowerCase(), refund });
    return this.record(refund, attempt.paymentId, options);
  }

  /** While the provider surely remembers the key, its answer is the outcome, and no list needs reading. */
  private async decide(attempt: RefundAttempt, options: CallOptions): Promise<OutcomeDecision> {
    const now = this.deps.clock();
    if (keySurelyRemembered(attempt, now)) return { kind: 'ask-provider' };
    return decideOutcome(attempt, await readOutcomeEvidence(this.deps, attempt, options), now);
  }

  /** The reconciler sends the attempt again under its key: the answer is the refund made under it, or made now. */
  private async askProvider(attempt: RefundAttempt, options: CallOptions): Promise<QuietAttemptOutcome> {
    const { keys, payments, events } = this.deps;
    if (!(await keys.markSent(attempt.idempotencyKey))) return { kind: 'left' };
    let refundId: string;
    try {
      refundId = (await this.createRefund(attempt, options)).id;
    } catch (error) {
      if (!isOutrightRefusal(error)) throw error;
      await keys.release(attempt);
      return { kind: 'not_made' };
    }
    const stored = await keys.recordRefund(attempt, refundId, { answered: false, source: 'provider_answer' });
    if (stored !== refundId) return { kind: 'left' };
    await events.publish({ paymentId: attempt.paymentId.toLowerCase(), refund: await payments.getRefund(attempt.paymentId, refundId, options) });
    return { kind: 'found', refundId };
  }

  /** A refund recorded before; the first client given it starts the key's 24 hours. */
  private async answerKnown(attempt: RefundAttempt, refundId: string, options: CallOptions): Promise<RefundRecord> {
    const refund = await this.getRefund(attempt.paymentId, refundId, options);
    if (!attempt.answered) await this.deps.keys.markAnswered(attempt.idempotencyKey);
    return refund;
  }

  private async createRefund(attempt: RefundAttempt, options: CallOptions): Promise<{ id: string }> {
    try {
      return await whileInFlight.execute(() => this.deps.payments.createRefund(attempt.paymentId, attempt.request, attempt.idempotencyKey, options));
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

/**
 * A retry whose earlier attempt may have made a listed refund that another attempt, which the provider may still
 * answer, may have made too: nothing is decided or sent until that one is settled.
 */
function undecided(attempt: RefundAttempt, waitMs: number): TryAgainError {
  return new TryAgainError(
    `The earlier request under idempotencyKey ${attempt.idempotencyKey} may have made a refund of payment ${attempt.paymentId} ` +
      'that another pending request with the same amount and reference may have made instead, and the provider can still answer that one: ' +
      `the gateway does not guess. ${SEND_AGAIN}`,
    Math.max(1, Math.ceil(waitMs / 1000)),
  );
}

/**
 * The provider answered, under the attempt's own key, a refund the gateway had already recorded for another
 * request; it stays with that one, and this attempt stays pending until the provider has surely forgotten its key
 * (it was just sent), when it is sent afresh.
 */
function claimedElsewhere(attempt: RefundAttempt, refundId: string): TryAgainError {
  return new TryAgainError(
    `The provider answered refund ${refundId} for idempotencyKey ${attempt.idempotencyKey}, but the gateway had already given that refund ` +
      `to another request of payment ${attempt.paymentId}, and does not take it back. This request stays pending: send it again with the ` +
      'same idempotencyKey once retryAfterSeconds have passed, when the provider has forgotten the key and the refund is made afresh.',
    (PROVIDER_KEY_MEMORY_MS + KEY_MEMORY_MARGIN_MS) / 1000,
  );
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
