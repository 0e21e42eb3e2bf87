import type { SandboxContext } from '../context';
import { Problem } from '../http/respond';
import { acceptProcessing } from '../payments/processing';
import { scheduleWithdrawalStages } from './withdrawal.stages';
import { sameRequest, type Withdrawal, type WithdrawalRequest } from './withdrawal.types';

/**
 * Withdrawals by transaction_id, which is their idempotency key: a withdrawal is created at most once per id,
 * however many times, and however concurrently, the client sends it.
 */
export class WithdrawalStore {
  private readonly withdrawals = new Map<string, Withdrawal>();
  /** Creations still being processed, so a duplicate arriving meanwhile joins the first instead of racing it. */
  private readonly inFlight = new Map<string, { request: WithdrawalRequest; done: Promise<Withdrawal> }>();

  constructor(private readonly context: SandboxContext) {}

  get(transactionId: string): Withdrawal | undefined {
    return this.withdrawals.get(transactionId.toLowerCase());
  }

  /**
   * The withdrawal for this request: created now, or the existing one when the same request was made before (or is
   * being made right now). The same transaction_id with a different body is 422 idempotency-key-reuse.
   */
  async create(request: WithdrawalRequest): Promise<Withdrawal> {
    const existing = this.withdrawals.get(request.transaction_id);
    if (existing) return this.replay(existing, request);
    const pending = this.inFlight.get(request.transaction_id);
    if (pending) {
      // Waiting rather than answering 409: the transaction_id names one withdrawal, so once the first request has
      // finished the duplicate has a definite answer, and the client is spared a retry.
      return this.replay(await pending.done, request);
    }

    const done = this.accept(request);
    this.inFlight.set(request.transaction_id, { request, done });
    try {
      return await done;
    } finally {
      this.inFlight.delete(request.transaction_id);
    }
  }

  private async accept(request: WithdrawalRequest): Promise<Withdrawal> {
    await acceptProcessing();
    const authorisedAtMs = this.context.clock.nowMs();
    const withdrawal: Withdrawal = {
      transaction_id: request.transaction_id,
      authorised_at: new Date(authorisedAtMs).toISOString(),
      submitted_at: null,
      settled_at: null,
      rejected_at: null,
      failed_at: null,
      beneficiary_name: request.beneficiary_name,
      beneficiary_iban: request.beneficiary_iban,
      beneficiary_reference: request.beneficiary_reference,
      amount_in_minor: request.amount_in_minor,
      currency: request.currency,
      status: 'authorised',
      context_code: 'withdrawal',
    };
    this.withdrawals.set(withdrawal.transaction_id, withdrawal);
    this.context.ledger.record({
      kind: 'withdrawal',
      id: withdrawal.transaction_id,
      amount_in_minor: withdrawal.amount_in_minor,
      currency: withdrawal.currency,
      created_at: withdrawal.authorised_at!,
    });
    scheduleWithdrawalStages(this.context.clock, withdrawal, authorisedAtMs);
    return withdrawal;
  }

  private replay(existing: Withdrawal, request: WithdrawalRequest): Withdrawal {
    if (sameRequest(existing, request)) return existing;
    throw new Problem(
      422,
      'idempotency-key-reuse',
      `transaction_id ${request.transaction_id} was already used for a withdrawal with a different body (${differences(existing, request)}); ` +
        'send the same body to get that withdrawal again, or a new transaction_id for a new withdrawal.',
    );
  }
}

function differences(existing: Withdrawal, request: WithdrawalRequest): string {
  const fields = ['beneficiary_name', 'beneficiary_iban', 'beneficiary_reference', 'currency', 'amount_in_minor', 'context_code'] as const;
  return fields
    .filter((field) => existing[field] !== request[field])
    .map((field) => `${field} differs`)
    .join(', ');
}
