import { createHash, randomUUID } from 'node:crypto';
import type { Principal } from '../identity/principal';
import type { GatewayContext } from '../platform/graphql/operation-context';
import type { ProviderWithdrawal, ProviderWithdrawalRequest } from '../platform/provider/provider-types';
import {
  BadUserInputError,
  BeneficiaryNotVerifiedError,
  GatewayError,
  IdempotencyConflictError,
  NotFoundError,
  UpstreamError,
} from '../platform/errors/gateway-errors';
import { toPayout, toPayoutFromRecord, withdrawalView } from './payout.mapper';
import type { Payout } from './payout.type';
import { topics } from '../platform/live/topics';
import { sameHolderName } from '../beneficiaries';
import { ownerKey, sameOwner, type PayoutOwner, type PayoutRecord } from './payout-ledger';
import { approvalCheck } from './payout-approval';
import { payoutAdmission } from './payout-policy';
import { AWAITING_APPROVAL, DECLINED, EXPIRED, FINAL_PAYOUT_STATUSES, PENDING_SUBMISSION } from './payout-status';

type Caller = Extract<Principal, { kind: 'user' | 'merchant' }>;

/** What the workflow needs outside a request too (the reconciler runs it with a logger and services of its own). */
export type MoneyDeps = Pick<GatewayContext, 'services' | 'logger' | 'requestId' | 'callOptions'>;

/**
 * How long an identical createPayout without transactionId answers the first payout instead of paying again
 * (docs/money.md). Long enough for any client's timeout-and-retry; a deliberate second identical payout within it
 * is made with an explicit new transactionId.
 */
export const IDENTICAL_PAYOUT_WINDOW_MS = 15 * 60 * 1000;

/** How long one instance holds the right to send a payout; longer than the provider call with all its retries. */
const SUBMISSION_CLAIM_MS = 60_000;
/** How often a caller that found another's submission in progress looks again for its outcome. */
const CLAIM_POLL_MS = 50;

/** Request fields as the client named them, for messages about a conflicting retry. */
const INPUT_NAMES: Record<keyof ProviderWithdrawalRequest, string> = {
  transaction_id: 'transactionId',
  beneficiary_name: 'beneficiaryName',
  beneficiary_iban: 'beneficiaryIban',
  beneficiary_reference: 'beneficiaryReference',
  currency: 'currency',
  amount_in_minor: 'amountInMinor',
  context_code: 'contextCode',
};

export function ownerOf(caller: Caller): PayoutOwner {
  return caller.kind === 'user' ? { kind: 'user', userId: caller.userId } : { kind: 'merchant', keyId: caller.keyId };
}

/**
 * createPayout after validation. `explicitId` says whether the client chose the transaction id; without one, an
 * identical request inside IDENTICAL_PAYOUT_WINDOW_MS answers the first payout.
 *
 * Order matters for money: the verification and the policy refuse before any provider call; the record (with the
 * exact request) is committed before the provider call, so a crash or a failed call in between leaves something a
 * retry or the reconciler completes with the same bytes, which the provider deduplicates.
 */
export async function createPayout(context: GatewayContext, caller: Caller, request: ProviderWithdrawalRequest, explicitId: boolean): Promise<Payout> {
  const { payoutLedger, config } = context.services;
  const owner = ownerOf(caller);
  const known = await payoutLedger.get(request.transaction_id);
  if (known) return answerRepeat(context, owner, known, request);
  await assertBeneficiaryVerified(context, caller, request);
  const { record, created } = await payoutLedger.record(
    { owner, request, ...(explicitId ? {} : { fingerprint: { value: fingerprintOf(owner, request), windowMs: IDENTICAL_PAYOUT_WINDOW_MS } }) },
    payoutAdmission(config.money),
  );
  if (!created) {
    // The same id raced in on another instance, or an identical request within the window: that payout.
    return answerRepeat(context, owner, record, { ...request, transaction_id: record.transactionId });
  }
  if (record.status === AWAITING_APPROVAL) {
    context.logger.info({ transactionId: record.transactionId, amountInMinor: request.amount_in_minor }, 'payout awaits approval');
    return toPayoutFromRecord(record);
  }
  return submit(context, record);
}

/** A request for a payout already recorded: the same owner and the same fields answer it, anything else conflicts. */
async function answerRepeat(context: GatewayContext, owner: PayoutOwner, record: PayoutRecord, request: ProviderWithdrawalRequest): Promise<Payout> {
  if (!sameOwner(record.owner, owner)) {
    // Says nothing about the other payout, so nobody learns what someone else paid; a merchant key reads it with
    // `payout` but cannot resend it.
    throw new IdempotencyConflictError('This transactionId is already used by another payout. Use a new UUID (or omit transactionId) for a new payout.');
  }
  const differing = (Object.keys(INPUT_NAMES) as (keyof ProviderWithdrawalRequest)[]).filter((field) => record.request[field] !== request[field]);
  if (differing.length > 0) {
    throw new IdempotencyConflictError(
      `transactionId ${request.transaction_id} was already used for a payout with a different ${differing.map((field) => INPUT_NAMES[field]).join(', ')}. ` +
        'Repeat the original request exactly to get that payout, or use a new transactionId for a new payout.',
    );
  }
  if (record.status !== PENDING_SUBMISSION) return toPayoutFromRecord(record);
  return submit(context, record);
}

/**
 * Sends a pending payout, as the one instance holding its submission claim; a caller that finds the claim held
 * waits for that submission's outcome instead of sending again. Past PAYOUT_SUBMISSION_EXPIRY_MS it is never sent:
 * it is reconciled with the provider instead, and expires if the provider has nothing.
 */
export async function submit(context: GatewayContext, record: PayoutRecord): Promise<Payout> {
  const { payoutLedger, config } = context.services;
  const claimant = randomUUID();
  for (;;) {
    if (payoutLedger.now() - record.queuedAtMs >= config.money.payoutSubmissionExpiryMs) return toPayoutFromRecord(await reconcilePending(context, record));
    if (await payoutLedger.claim(record.transactionId, claimant, SUBMISSION_CLAIM_MS, config.money.payoutSubmissionExpiryMs)) break;
    await new Promise((resolve) => setTimeout(resolve, CLAIM_POLL_MS));
    const current = await payoutLedger.get(record.transactionId);
    if (!current) throw new BadUserInputError('The provider refused this payout; nothing was paid. Correct the input and try again.');
    if (current.status !== PENDING_SUBMISSION) return toPayoutFromRecord(current);
    record = current;
  }
  let withdrawal: ProviderWithdrawal;
  try {
    withdrawal = await context.services.payouts.createWithdrawal(record.request, context.callOptions());
    if (!isWithdrawalOf(withdrawal, record.transactionId))
      throw new UpstreamError(
        'The provider answered the payout with a body the gateway cannot read. Its status is being checked; read the payout again shortly.',
      );
  } catch (error) {
    if (error instanceof BadUserInputError) {
      // Refused outright: nothing was paid.
      await payoutLedger.remove(record.transactionId);
      throw error;
    }
    if (error instanceof IdempotencyConflictError || error instanceof UpstreamError) {
      // 409 "still processing", an idempotency clash or an unreadable answer: the provider may hold the payout,
      // so the record stays and the provider's own state decides.
      await payoutLedger.noteFailure(record.transactionId, claimant, error.code);
      const settled = await adoptFromProvider(context, record);
      if (settled) return toPayout(settled);
      throw error;
    }
    const code = error instanceof GatewayError ? error.code : 'INTERNAL_SERVER_ERROR';
    await payoutLedger
      .noteFailure(record.transactionId, claimant, code)
      .catch((noteError: unknown) => context.logger.warn({ err: noteError }, 'could not note a failed payout submission'));
    context.logger.warn({ transactionId: record.transactionId, code }, 'payout submission failed; kept for a retry and the reconciler');
    throw error;
  }
  await payoutLedger.confirm(record.transactionId, withdrawal);
  return toPayout(withdrawal);
}

/**
 * The provider's withdrawal under this payout's id, stored when it is this payout. One under the same id with
 * other fields is someone else's (created at the provider without the gateway): the record is dropped, so this
 * caller never reads it as theirs.
 */
export async function adoptFromProvider(context: MoneyDeps, record: PayoutRecord): Promise<ProviderWithdrawal | undefined> {
  const live = await context.services.payouts.getWithdrawal(record.transactionId, context.callOptions()).catch((error: unknown) => {
    if (error instanceof NotFoundError) return undefined;
    context.logger.warn({ err: error, transactionId: record.transactionId }, 'could not read a payout back from the provider');
    return undefined;
  });
  if (!live || !isWithdrawalOf(live, record.transactionId)) return undefined;
  if (!matchesRequest(live, record.request)) {
    await context.services.payoutLedger.remove(record.transactionId);
    throw new IdempotencyConflictError('This transactionId is already used by another payout. Use a new UUID (or omit transactionId) for a new payout.');
  }
  await context.services.payoutLedger.confirm(record.transactionId, live);
  return live;
}

/**
 * A pending payout past its submission window (or found by the reconciler): what the provider has is stored; past
 * the window with nothing there, it is marked expired so that it can never be sent.
 */
export async function reconcilePending(context: MoneyDeps, record: PayoutRecord): Promise<PayoutRecord> {
  const { payoutLedger, config } = context.services;
  const found = await adoptFromProvider(context, record).catch(() => undefined);
  if (found) return (await payoutLedger.get(record.transactionId)) ?? record;
  if (payoutLedger.now() - record.queuedAtMs < config.money.payoutSubmissionExpiryMs) return record;
  const expired = await payoutLedger.transition(record.transactionId, PENDING_SUBMISSION, EXPIRED);
  if (expired) await publish(context, expired);
  return expired ?? (await payoutLedger.get(record.transactionId)) ?? record;
}

/**
 * approvePayout (merchant keys): an awaiting-approval payout becomes pending and is sent, if it still may be
 * (payout-approval.ts: its owner not revoked, its beneficiary still verified, every limit still holding); one
 * past PAYOUT_APPROVAL_EXPIRY_MS expires instead. A refusal sends nothing.
 */
export async function approvePayout(context: GatewayContext, transactionId: string): Promise<Payout> {
  const { payoutLedger, config, beneficiaries } = context.services;
  const outcome = await payoutLedger.approve(transactionId, config.money.payoutApprovalExpiryMs, approvalCheck(config.money, beneficiaries));
  if (outcome.kind === 'expired') {
    context.logger.info({ transactionId }, 'payout expired awaiting approval');
    await publish(context, outcome.record);
  }
  if (outcome.kind !== 'approved') throw await notAwaiting(context, transactionId);
  const approved = outcome.record;
  context.logger.info({ transactionId }, 'payout approved');
  await publish(context, approved);
  const payout = await submit(context, approved);
  // Its subscribers were watching before it was sent: they see the provider's answer too.
  const sent = await context.services.payoutLedger.get(transactionId);
  if (sent) await publish(context, sent);
  return payout;
}

/** declinePayout (merchant keys): an awaiting-approval payout ends as declined, never sent. */
export async function declinePayout(context: GatewayContext, transactionId: string, reason: string): Promise<Payout> {
  const declined = await context.services.payoutLedger.transition(transactionId, AWAITING_APPROVAL, DECLINED, { declineReason: reason });
  if (!declined) throw await notAwaiting(context, transactionId);
  context.logger.info({ transactionId }, 'payout declined');
  await publish(context, declined);
  return toPayoutFromRecord(declined);
}

async function notAwaiting(context: GatewayContext, transactionId: string): Promise<GatewayError> {
  const record = await context.services.payoutLedger.get(transactionId);
  if (!record) return new NotFoundError('No payout with that transactionId was recorded by the gateway.');
  return new BadUserInputError(`Payout ${transactionId} is ${record.status}; only a payout awaiting approval can be approved or declined.`, 'transactionId');
}

/** payoutUpdated subscribers see the gateway's own status changes too. */
export async function publish(context: MoneyDeps, record: PayoutRecord): Promise<void> {
  await context.services.live.bus
    .publish(topics.payout(record.transactionId), withdrawalView(record))
    .catch((error: unknown) => context.logger.warn({ err: error, transactionId: record.transactionId }, 'payout change could not be published'));
}

/**
 * A session may pay only an IBAN it verified itself; a merchant key may pay an IBAN any user verified (README,
 * "Payouts and verification"). Either way the beneficiary name must be the holder name the bank verified.
 */
async function assertBeneficiaryVerified(context: GatewayContext, caller: Caller, request: ProviderWithdrawalRequest): Promise<void> {
  const { beneficiaries } = context.services;
  const iban = request.beneficiary_iban;
  if (caller.kind === 'user') {
    const verified = await beneficiaries.findForUser(caller.userId, iban);
    if (!verified) {
      throw new BeneficiaryNotVerifiedError(
        `IBAN ${iban} has not been verified by this user. Call verifyAccountHolder with the account holder's name while signed in ` +
          'to the bank that holds the account, then pay out; a different account always needs its own verification.',
      );
    }
    if (!sameHolderName(verified.name, request.beneficiary_name)) {
      throw new BeneficiaryNotVerifiedError(
        `beneficiaryName "${request.beneficiary_name}" is not the holder name the bank verified for IBAN ${iban} ("${verified.name}"). ` +
          'Use the verified holder name, or verify the account again.',
      );
    }
    return;
  }
  const holders = await beneficiaries.holdersOf(iban);
  if (holders.length === 0) {
    throw new BeneficiaryNotVerifiedError(`No user has verified IBAN ${iban}. Payouts go only to accounts an end user verified with verifyAccountHolder.`);
  }
  if (!holders.some((holder) => sameHolderName(holder.name, request.beneficiary_name))) {
    // The verified names are not listed: a merchant key should not be able to look up who holds an IBAN.
    throw new BeneficiaryNotVerifiedError(
      `beneficiaryName "${request.beneficiary_name}" is not a holder name verified for IBAN ${iban}. Use the account holder's name as their bank reported it.`,
    );
  }
}

/**
 * Query.payout: a session sees only its own payouts (another's id reads as null, exactly like an unknown id, so ids
 * cannot be probed); a merchant key sees every payout, including ones created at the provider without the gateway.
 */
export async function readPayout(context: GatewayContext, caller: Caller, transactionId: string): Promise<Payout | null> {
  const record = await context.services.payoutLedger.get(transactionId);
  if (caller.kind === 'user' && (!record || !sameOwner(record.owner, ownerOf(caller)))) return null;
  if (record) return livePayout(context, record);
  const live = await liveWithdrawal(context, transactionId);
  return live ? toPayout(live) : null;
}

/** Viewer.payouts: newest first, each with live status; the provider reads run in parallel. */
export async function payoutsOf(context: GatewayContext, caller: Extract<Caller, { kind: 'user' }>): Promise<Payout[]> {
  const records = await context.services.payoutLedger.listForOwner(ownerOf(caller));
  return Promise.all(
    records.map(async (record) => {
      try {
        return await livePayout(context, record);
      } catch (error) {
        // One unreadable payout should not hide the others: show its last known state, and log why.
        context.logger.warn({ err: error, transactionId: record.transactionId }, 'live payout status unavailable; showing the stored state');
        return toPayoutFromRecord(record);
      }
    }),
  );
}

/** The record's payout with the provider's current status, stored back when it moved. */
async function livePayout(context: GatewayContext, record: PayoutRecord): Promise<Payout> {
  // Final, or never sent (awaiting approval): the stored state is as live as a GET.
  if (FINAL_PAYOUT_STATUSES.has(record.status) || record.status === AWAITING_APPROVAL) return toPayoutFromRecord(record);
  const live = await liveWithdrawal(context, record.transactionId);
  // Not at the provider: a submission that never got through. It shows as pending-submission until sent or expired.
  if (!live || !isWithdrawalOf(live, record.transactionId)) return toPayoutFromRecord(record);
  if (!record.withdrawal && !matchesRequest(live, record.request)) return toPayoutFromRecord(record);
  if (JSON.stringify(live) !== JSON.stringify(record.withdrawal)) {
    await context.services.payoutLedger
      .confirm(record.transactionId, live)
      .catch((error: unknown) => context.logger.warn({ err: error, transactionId: record.transactionId }, 'could not store a payout status'));
  }
  return toPayout(live);
}

/** GET once per operation per withdrawal (a query may ask for one payout twice); undefined when the provider has none. */
const liveReads = new WeakMap<GatewayContext, Map<string, Promise<ProviderWithdrawal | undefined>>>();

function liveWithdrawal(context: GatewayContext, transactionId: string): Promise<ProviderWithdrawal | undefined> {
  let reads = liveReads.get(context);
  if (!reads) liveReads.set(context, (reads = new Map()));
  let read = reads.get(transactionId);
  if (!read) {
    read = context.services.payouts.getWithdrawal(transactionId, context.callOptions()).catch((error: unknown) => {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    });
    reads.set(transactionId, read);
  }
  return read;
}

/** The owner and every field that makes a payout what it is: identical requests share it. */
export function fingerprintOf(owner: PayoutOwner, request: ProviderWithdrawalRequest): string {
  const parts = [
    ownerKey(owner),
    request.beneficiary_iban,
    request.beneficiary_name,
    request.beneficiary_reference,
    String(request.amount_in_minor),
    request.currency,
  ];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/** A provider answer is taken as this payout's withdrawal only when it is one, under this id. */
function isWithdrawalOf(value: unknown, transactionId: string): value is ProviderWithdrawal {
  const candidate = value as Partial<ProviderWithdrawal> | null | undefined;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.transaction_id === 'string' &&
    candidate.transaction_id.toLowerCase() === transactionId &&
    typeof candidate.status === 'string'
  );
}

function matchesRequest(withdrawal: ProviderWithdrawal, request: ProviderWithdrawalRequest): boolean {
  return (
    withdrawal.beneficiary_iban === request.beneficiary_iban &&
    withdrawal.amount_in_minor === request.amount_in_minor &&
    withdrawal.currency === request.currency &&
    withdrawal.beneficiary_reference === request.beneficiary_reference &&
    withdrawal.beneficiary_name === request.beneficiary_name
  );
}
