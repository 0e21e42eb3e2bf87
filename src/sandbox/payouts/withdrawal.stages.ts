import type { SandboxClock } from '../clock';
import type { Withdrawal } from './withdrawal.types';

/** Sandbox seconds after creation (docs/provider-choices.md, Withdrawals). */
export const SUBMIT_AFTER_SECONDS = 5;
export const SETTLE_AFTER_SECONDS = 30;

/** Scenario references, so clients can rehearse the unhappy endings: case-sensitive prefixes. */
export const REJECT_PREFIX = 'REJECT';
export const FAIL_PREFIX = 'FAIL';

/**
 * Moves a new withdrawal through its stages on sandbox time. Each stage's timestamp is the instant the stage was
 * due, not when the clock happened to run it, so a test that skips an hour still sees submitted_at exactly 5 s
 * after authorised_at.
 */
export function scheduleWithdrawalStages(clock: SandboxClock, withdrawal: Withdrawal, authorisedAtMs: number): void {
  const submitAtMs = authorisedAtMs + SUBMIT_AFTER_SECONDS * 1000;
  const settleAtMs = authorisedAtMs + SETTLE_AFTER_SECONDS * 1000;

  clock.at(submitAtMs, () => {
    if (withdrawal.beneficiary_reference.startsWith(REJECT_PREFIX)) {
      // Refused by the scheme at the submit step: it never counts as submitted.
      withdrawal.status = 'rejected';
      withdrawal.rejected_at = iso(submitAtMs);
      return;
    }
    withdrawal.status = 'submitted';
    withdrawal.submitted_at = iso(submitAtMs);
    clock.at(settleAtMs, () => {
      if (withdrawal.beneficiary_reference.startsWith(FAIL_PREFIX)) {
        // Submitted, then returned by the beneficiary's bank instead of settling.
        withdrawal.status = 'failed';
        withdrawal.failed_at = iso(settleAtMs);
        return;
      }
      withdrawal.status = 'settled';
      withdrawal.settled_at = iso(settleAtMs);
    });
  });
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
