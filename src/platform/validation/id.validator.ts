import { InputProblems } from './input-problems';
import { isUuid, shown } from './text-rules';

/**
 * Ids in query arguments. Both are UUIDs at the provider; lower-cased because one UUID is one resource whatever its
 * case, and the gateway's store keys must agree with that.
 */
export function validatePaymentId(id: string, field = 'id'): string {
  return uuidOrThrow(id, field, 'a payment id');
}

export function validateTransactionId(id: string, field = 'transactionId'): string {
  return uuidOrThrow(id, field, "a payout's transaction id");
}

function uuidOrThrow(id: string, field: string, what: string): string {
  if (!isUuid(id)) {
    const problems = new InputProblems();
    problems.add(field, `must be ${what}, a UUID; got ${shown(id)}`);
    problems.throwIfAny();
  }
  return id.toLowerCase();
}
