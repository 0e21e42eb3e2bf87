import type { PassJob, PassRun } from '../platform/scheduler/scheduler';
import type { PayoutStore, PayoutRecord } from './payout.store';
import type { PayoutService } from './payout.service';
import { EXPIRED } from './payout-status';

/** Records looked at per kind per pass: a backlog is worked through over several passes, not in one burst. */
const BATCH = 100;
/** A background job, not an operation: its provider calls have no deadline but their HTTP timeouts. */
const CALL_OPTIONS = { requestId: 'reconciler' };

export interface PayoutPassDeps {
  payouts: PayoutService;
  ledger: PayoutStore;
  /** PAYOUT_APPROVAL_EXPIRY_MS. */
  approvalExpiryMs: number;
}

/**
 * The payouts' periodic passes (docs/money.md, "The reconciler"), run in this order by the scheduler:
 * - payouts never confirmed by the provider (a crash or a failed call after recording): what the provider has is
 *   stored; past PAYOUT_SUBMISSION_EXPIRY_MS with nothing there, they expire and can never be sent;
 * - payouts the provider confirmed but that are not final: re-read, stored and published when they moved;
 * - payouts awaiting approval for longer than PAYOUT_APPROVAL_EXPIRY_MS: expired (never sent) and published, so a
 *   payout nobody approved does not stay approvable for ever.
 * Every change is stored in the ledger before it is published.
 */
export function payoutPasses(deps: PayoutPassDeps): PassJob[] {
  return [
    { name: 'payouts-unconfirmed', run: (run) => reconcileUnconfirmed(deps, run) },
    { name: 'payouts-in-flight', run: (run) => reconcileInFlight(deps, run) },
    { name: 'payouts-unapproved', run: (run) => expireUnapproved(deps, run) },
  ];
}

async function reconcileUnconfirmed({ payouts, ledger }: PayoutPassDeps, run: PassRun): Promise<void> {
  for (const record of await ledger.unconfirmed(BATCH)) {
    if (run.stopping()) return;
    const after = await payouts.reconcilePending(record, CALL_OPTIONS);
    if (after.confirmed) {
      repaired(run, 'payout_confirmed', after);
      await payouts.publish(after);
    } else if (after.status === EXPIRED) {
      repaired(run, 'payout_expired', after);
    }
  }
}

async function reconcileInFlight({ payouts, ledger }: PayoutPassDeps, run: PassRun): Promise<void> {
  for (const record of await ledger.inFlight(BATCH)) {
    if (run.stopping()) return;
    const before = JSON.stringify(record.confirmed);
    const live = await payouts.adoptFromProvider(record, CALL_OPTIONS).catch((error: unknown) => {
      run.logger.warn({ err: error, transactionId: record.transactionId }, 'reconciler could not re-read a payout');
      return undefined;
    });
    if (live && JSON.stringify(live) !== before) {
      const updated = await ledger.get(record.transactionId);
      if (updated) {
        repaired(run, 'payout_updated', updated);
        await payouts.publish(updated);
      }
    } else {
      await ledger.touch(record.transactionId);
    }
  }
}

async function expireUnapproved({ payouts, ledger, approvalExpiryMs }: PayoutPassDeps, run: PassRun): Promise<void> {
  for (const record of await ledger.expireAwaitingApproval(approvalExpiryMs, BATCH)) {
    repaired(run, 'payout_approval_expired', record);
    await payouts.publish(record);
  }
}

function repaired(run: PassRun, kind: string, record: PayoutRecord): void {
  run.repaired(kind);
  run.logger.info({ transactionId: record.transactionId, status: record.status, repair: kind }, 'reconciler repaired a payout');
}
