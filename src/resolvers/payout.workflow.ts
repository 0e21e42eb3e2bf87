import type { Principal } from '../auth/principal';
import type { GatewayContext } from '../context';
import type { ProviderWithdrawal, ProviderWithdrawalRequest } from '../datasources/provider-types';
import {
  BadUserInputError,
  BeneficiaryNotVerifiedError,
  GatewayError,
  IdempotencyConflictError,
  NotFoundError,
} from '../errors';
import { toPayout, toPayoutFromRecord } from '../mappers/payout.mapper';
import type { Payout } from '../schema/payout.type';
import { PENDING_SUBMISSION, sameOwner, type PayoutOwner, type PayoutRecord } from '../store/payout.store';
import { sameHolderName } from '../validation/holder-name';

type Caller = Extract<Principal, { kind: 'user' | 'merchant' }>;

/** README, Withdrawals: these never change again, so their stored state is as live as a GET. */
const TERMINAL_STATUSES = new Set(['settled', 'rejected', 'failed']);

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
 * createPayout after validation. Everything for one transaction id runs under that id's lock, so the same id sent
 * twice at once is one provider call; the second caller finds the first's record and answers from it.
 *
 * Order matters for money: the verification check refuses before any provider call; the record (with the exact
 * request) is written before the provider call, so a crash or a failed call in between leaves something a retry
 * with the same transaction id completes, with the same bytes, which the provider deduplicates.
 */
export async function createPayout(context: GatewayContext, caller: Caller, request: ProviderWithdrawalRequest): Promise<Payout> {
  const store = context.services.payoutRecords;
  return store.withPayout(request.transaction_id, async () => {
    const existing = await store.get(request.transaction_id);
    if (existing) {
      assertSameRequest(existing, request, caller);
      // Already confirmed by the provider: answer as the first call did, without paying again.
      if (existing.withdrawal) return toPayout(existing.withdrawal);
      return submit(context, existing);
    }
    await assertBeneficiaryVerified(context, caller, request);
    const now = new Date().toISOString();
    const record: PayoutRecord = {
      transactionId: request.transaction_id,
      owner: ownerOf(caller),
      request,
      createdAt: now,
      updatedAt: now,
      status: PENDING_SUBMISSION,
    };
    await store.create(record);
    return submit(context, record);
  });
}

/** Sends the recorded request (the http client retries it: transaction_id makes it idempotent) and stores the answer. */
async function submit(context: GatewayContext, record: PayoutRecord): Promise<Payout> {
  const store = context.services.payoutRecords;
  let withdrawal: ProviderWithdrawal;
  try {
    withdrawal = await context.services.payouts.createWithdrawal(record.request, { requestId: context.requestId });
  } catch (error) {
    if (error instanceof BadUserInputError || error instanceof IdempotencyConflictError) {
      // Refused outright: nothing was paid, and keeping the record would let this caller read, under this id, a
      // withdrawal that someone else created at the provider.
      await store.remove(record);
      throw error;
    }
    if (error instanceof GatewayError) {
      // Kept with its request: a retry of the mutation with the same transactionId sends it again.
      const failed: PayoutRecord = { ...record, updatedAt: new Date().toISOString(), lastError: { code: error.code, at: new Date().toISOString() } };
      await store.save(failed).catch((saveError: unknown) => context.logger.warn({ err: saveError }, 'could not note a failed payout submission'));
      context.logger.warn({ transactionId: record.transactionId, code: error.code }, 'payout submission failed; kept for a retry');
    }
    throw error;
  }
  const { lastError: _dropped, ...rest } = record;
  await store.save({ ...rest, withdrawal, status: withdrawal.status, updatedAt: new Date().toISOString() });
  return toPayout(withdrawal);
}

/** The same transaction id must carry the same payout, from the same owner (a merchant key may repeat anyone's). */
function assertSameRequest(existing: PayoutRecord, request: ProviderWithdrawalRequest, caller: Caller): void {
  if (caller.kind !== 'merchant' && !sameOwner(existing.owner, ownerOf(caller))) {
    // Says nothing about the other payout, so a session cannot learn what someone else paid.
    throw new IdempotencyConflictError('This transactionId is already used by another payout. Use a new UUID (or omit transactionId) for a new payout.');
  }
  const differing = (Object.keys(INPUT_NAMES) as (keyof ProviderWithdrawalRequest)[]).filter((field) => existing.request[field] !== request[field]);
  if (differing.length > 0) {
    throw new IdempotencyConflictError(
      `transactionId ${request.transaction_id} was already used for a payout with a different ${differing.map((field) => INPUT_NAMES[field]).join(', ')}. ` +
        'Repeat the original request exactly to get that payout, or use a new transactionId for a new payout.',
    );
  }
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
    throw new BeneficiaryNotVerifiedError(
      `No user has verified IBAN ${iban}. Payouts go only to accounts an end user verified with verifyAccountHolder.`,
    );
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
  const record = await context.services.payoutRecords.get(transactionId);
  if (caller.kind === 'user' && (!record || !sameOwner(record.owner, ownerOf(caller)))) return null;
  if (record) return livePayout(context, record);
  const live = await liveWithdrawal(context, transactionId);
  return live ? toPayout(live) : null;
}

/** Viewer.payouts: newest first, each with live status; the provider reads run in parallel. */
export async function payoutsOf(context: GatewayContext, caller: Extract<Caller, { kind: 'user' }>): Promise<Payout[]> {
  const records = await context.services.payoutRecords.listForOwner(ownerOf(caller));
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
  if (TERMINAL_STATUSES.has(record.status) && record.withdrawal) return toPayout(record.withdrawal);
  const live = await liveWithdrawal(context, record.transactionId);
  // Not at the provider: a submission that never got through. It shows as pending-submission until retried.
  if (!live) return toPayoutFromRecord(record);
  if (JSON.stringify(live) !== JSON.stringify(record.withdrawal)) {
    const updated: PayoutRecord = { ...record, withdrawal: live, status: live.status, updatedAt: new Date().toISOString() };
    await context.services.payoutRecords
      .save(updated)
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
    read = context.services.payouts.getWithdrawal(transactionId, { requestId: context.requestId }).catch((error: unknown) => {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    });
    reads.set(transactionId, read);
  }
  return read;
}
