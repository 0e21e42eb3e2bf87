import { handleWhen, retry } from 'cockatiel';
import type { Transaction } from 'kysely';
import type { Tables } from '../platform/db/tables';
import { isUniqueViolation } from '../platform/db/transaction';
import type { PayoutOwner, PayoutRequest } from './payout.model';
import type { NewPayout, PayoutRecord, PayoutStore } from './payout.store';
import { admissionStatus, type PayoutLimits, type PayoutTotals } from './payout-policy';
import { assertApprovable, type ApprovalFacts, type VerifiedBeneficiaries } from './payout-approval';
import { AWAITING_APPROVAL, EXPIRED, PENDING_SUBMISSION } from './payout-status';

/** Another instance inserted the same id or fingerprint between our read and our write: read theirs, at most twice more. */
const afterInsertRace = retry(handleWhen(isUniqueViolation), { maxAttempts: 2 });

/** approvePayout's outcome: approved (now pending-submission), expired on the way (past the approval expiry), or neither. */
export type ApprovalOutcome = { kind: 'approved' | 'expired'; record: PayoutRecord } | { kind: 'not-awaiting' };

/**
 * Records a payout under the payout policy, or answers the one already recorded under its transaction id or
 * fingerprint (`created` false): the lookups, the sums, the policy's decision and the insert are one transaction
 * under the owner's and the IBAN's locks, so two instances cannot both pass a limit only one payout fits.
 */
export function recordPayout(
  store: PayoutStore,
  policy: PayoutLimits,
  payout: NewPayout,
  options: { alwaysApprove?: boolean } = {},
): Promise<{ record: PayoutRecord; created: boolean }> {
  const { owner, request, fingerprint } = payout;
  return afterInsertRace.execute(() =>
    store.underPayoutLocks(owner, request.beneficiaryIban, async (trx) => {
      const now = store.now();
      const known = (await store.findIn(trx, request.transactionId)) ?? (fingerprint && (await store.findByFingerprintIn(trx, fingerprint.value, now)));
      if (known) return { record: known, created: false };
      const totals = owner.kind === 'user' ? await totalsIn(store, trx, owner, request, now) : undefined;
      const status = admissionStatus(policy, owner, request, totals, options);
      return { record: await store.insertIn(trx, payout, status, now), created: true };
    }),
  );
}

/**
 * Approves a payout awaiting approval, re-checked (payout-approval.ts) under the same locks and in the same
 * transaction as admission, so what it reads (the caps, the owner, the beneficiary) still holds when the payout
 * becomes pending-submission. One awaiting longer than `expiryMs` expires instead and is never sent.
 */
export async function approveAwaiting(
  store: PayoutStore,
  policy: PayoutLimits,
  beneficiaries: VerifiedBeneficiaries,
  transactionId: string,
  expiryMs: number,
): Promise<ApprovalOutcome> {
  const found = await store.get(transactionId);
  if (!found) return { kind: 'not-awaiting' };
  return store.underPayoutLocks(found.owner, found.request.beneficiaryIban, async (trx) => {
    const now = store.now();
    const record = await store.findIn(trx, transactionId);
    if (!record || record.status !== AWAITING_APPROVAL || record.confirmed) return { kind: 'not-awaiting' };
    if (record.createdAtMs <= now - expiryMs) {
      const expired = await store.moveIn(trx, transactionId, AWAITING_APPROVAL, EXPIRED, now);
      return expired ? { kind: 'expired', record: expired } : { kind: 'not-awaiting' };
    }
    assertApprovable(policy, record, await approvalFactsIn(store, beneficiaries, trx, record, now));
    const approved = await store.moveIn(trx, transactionId, AWAITING_APPROVAL, PENDING_SUBMISSION, now);
    return approved ? { kind: 'approved', record: approved } : { kind: 'not-awaiting' };
  });
}

/** A user's sums before `request`, leaving out `excluding` (a payout being approved is already in them). */
async function totalsIn(
  store: PayoutStore,
  trx: Transaction<Tables>,
  owner: PayoutOwner,
  request: PayoutRequest,
  now: number,
  excluding?: string,
): Promise<PayoutTotals> {
  return {
    user: await store.dailyTotal(trx, owner, request.currency, now, excluding),
    beneficiary: await store.beneficiaryTotal(trx, request.beneficiaryIban, request.currency, now, excluding),
  };
}

async function approvalFactsIn(
  store: PayoutStore,
  beneficiaries: VerifiedBeneficiaries,
  trx: Transaction<Tables>,
  record: PayoutRecord,
  now: number,
): Promise<ApprovalFacts | undefined> {
  const { owner, request } = record;
  if (owner.kind !== 'user') return undefined;
  return {
    revoked: await store.isUserRevokedIn(trx, owner.userId),
    verified: await beneficiaries.findForUser(owner.userId, request.beneficiaryIban, trx),
    totals: await totalsIn(store, trx, owner, request, now, record.transactionId),
  };
}
