import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { GatewayContext } from '../platform/graphql/operation-context';
import type { ProviderRefund } from '../platform/provider/provider-types';
import {
  BadUserInputError,
  GatewayError,
  IdempotencyConflictError,
  NotFoundError,
  PaymentNotRefundableError,
  RefundExceedsPaymentError,
} from '../platform/errors/gateway-errors';
import { ProviderResponseError } from '../platform/provider/provider-errors';
import { toRefund } from './refund.mapper';
import type { Refund } from './refund.type';
import { topics } from '../platform/live/topics';
import type { RefundEvent } from './refund.webhook';
import type { RefundAttempt } from './refund-key.store';
import { refundMadeBy } from './refund-outcome';
import type { ValidRefundInput } from './refund-input.validator';

/**
 * "Still being processed" (409) means another send with this key is in flight at the provider (another gateway
 * instance, or our own first send whose answer was lost): waiting briefly and asking again gets its answer.
 */
const IN_FLIGHT_RETRIES = 4;
const IN_FLIGHT_BACKOFF_MS = 50;

/**
 * refundPayment after validation. The idempotency key is the client's, or one the gateway generated for this exact
 * request and stored before calling, so a retry of the request (its answer was lost) reuses it and the provider
 * answers the same refund. Work on one key runs under that key's lock: the same key twice at once is one POST.
 * An attempt sent before whose outcome was never heard is settled from the provider's refund list before it is
 * sent again: past the provider's 24 hours of key memory, the same key would make a second refund.
 */
export async function refundPayment(context: GatewayContext, input: ValidRefundInput): Promise<Refund> {
  const store = context.services.refundKeys;
  const fingerprint = fingerprintOf(input);
  const key = input.idempotencyKey ?? (await store.generatedKeyFor(fingerprint, randomUUID));

  return store.withKey(key, async () => {
    for (;;) {
      const { attempt, created } = await store.record({
        idempotencyKey: key,
        fingerprint,
        paymentId: input.paymentId,
        request: input.request,
        generated: input.idempotencyKey === undefined,
        createdAt: new Date(store.now()).toISOString(),
      });
      if (attempt.fingerprint !== fingerprint) {
        throw new IdempotencyConflictError(
          `idempotencyKey ${key} was already used for a different refund (${describeAttempt(attempt)}). ` +
            'Repeat that request exactly to get its refund, or use a new key for a new refund.',
        );
      }
      // Known before: answer with that refund, without a second POST.
      if (attempt.refundId) return answerKnown(context, attempt, attempt.refundId);
      if (!created) {
        const made = await refundMadeBy(context.services, attempt, context.callOptions());
        if (made) {
          const refund = mapRefund(context, made, attempt.paymentId);
          if (await store.recordRefund(attempt, made.id, { answered: true, authoritative: false })) return refund;
        }
        // Settled or forgotten by the reconciler meanwhile: start again from what is stored now.
        if (!(await store.markSent(key))) continue;
      }
      return send(context, attempt, input);
    }
  });
}

async function send(context: GatewayContext, attempt: RefundAttempt, input: ValidRefundInput): Promise<Refund> {
  const store = context.services.refundKeys;
  let refundId: string;
  try {
    refundId = (await createRefund(context, attempt)).id;
  } catch (error) {
    if (isOutrightRefusal(error)) await store.release(attempt);
    throw await explainRefusal(context, error, input, attempt.idempotencyKey);
  }
  await store.recordRefund(attempt, refundId, { answered: true, authoritative: true });
  // The provider answers only the id; the full refund (status, currency, created_at) comes from a GET.
  const refund = await context.services.payments.getRefund(attempt.paymentId, refundId, context.callOptions());
  // No webhook announces a new refund: refundUpdated subscribers on every instance hear of it from here.
  const event: RefundEvent = { paymentId: attempt.paymentId.toLowerCase(), refund };
  await context.services.live.bus.publish(topics.refund(event.paymentId), event);
  return mapRefund(context, refund, attempt.paymentId);
}

/** A refund recorded before; the first client given it starts the key's 24 hours. */
async function answerKnown(context: GatewayContext, attempt: RefundAttempt, refundId: string): Promise<Refund> {
  const refund = await getRefund(context, attempt.paymentId, refundId);
  if (!attempt.answered) await context.services.refundKeys.markAnswered(attempt.idempotencyKey);
  return refund;
}

async function createRefund(context: GatewayContext, attempt: RefundAttempt): Promise<{ id: string }> {
  try {
    for (let retry = 0; ; retry += 1) {
      try {
        return await context.services.payments.createRefund(attempt.paymentId, attempt.request, attempt.idempotencyKey, context.callOptions());
      } catch (error) {
        if (retry >= IN_FLIGHT_RETRIES || providerSlug(error) !== 'idempotency-key-concurrency-conflict') throw error;
        await delay(IN_FLIGHT_BACKOFF_MS * 2 ** retry);
      }
    }
  } finally {
    // No webhook announces a new (pending) refund, and even a failed call may have made one: a subscription
    // opening from now on reads the payment's refunds afresh rather than sharing an earlier read.
    context.services.live.refundReads.changed(attempt.paymentId);
  }
}

export async function getRefund(context: GatewayContext, paymentId: string, refundId: string): Promise<Refund> {
  const refund = await context.services.payments.getRefund(paymentId, refundId, context.callOptions());
  return mapRefund(context, refund, paymentId);
}

/** Query.payment: its refunds, oldest first; null for a payment the provider does not know. */
export async function refundsOfPayment(context: GatewayContext, paymentId: string): Promise<Refund[] | null> {
  let items: ProviderRefund[];
  try {
    items = await context.services.payments.listRefunds(paymentId, context.callOptions());
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
  return items.map((item) => mapRefund(context, item, paymentId));
}

/** An unknown provider status becomes UPSTREAM_ERROR; the log gets the value, so the enum can be extended. */
function mapRefund(context: GatewayContext, refund: ProviderRefund, paymentId: string): Refund {
  try {
    return toRefund(refund, paymentId);
  } catch (error) {
    context.logger.error({ err: error, paymentId, refundId: refund.id, status: refund.status }, 'refund with an unknown status');
    throw error;
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

/** The provider's refusals, reworded to say which payment, which amount and what was wrong. */
async function explainRefusal(context: GatewayContext, error: unknown, input: ValidRefundInput, key: string): Promise<unknown> {
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
    const committed = await committedAmount(context, input.paymentId);
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
async function committedAmount(context: GatewayContext, paymentId: string): Promise<number | undefined> {
  try {
    const refunds = await context.services.payments.listRefunds(paymentId, context.callOptions());
    return refunds.filter((refund) => refund.status !== 'failed').reduce((sum, refund) => sum + refund.amount_in_minor, 0);
  } catch {
    return undefined;
  }
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
