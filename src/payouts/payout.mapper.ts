import type { PayoutView } from './payout.model';
import { toPayoutStatus } from './payout-status.enum';
import { Payout } from './payout.type';

/** A payout as the service answers it, as the schema's Payout. */
export function toPayout(source: PayoutView): Payout {
  return Object.assign(new Payout(), { ...source, state: toPayoutStatus(source.status) });
}
