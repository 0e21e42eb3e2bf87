import { registerEnumType } from 'type-graphql';
import type { RefundStatus as RefundStatusName } from './refund.model';

// Values equal the names so a status reads the same in code, in stores and on the wire; mapping from the
// provider's lowercase statuses happens where provider objects are mapped (refund.model.ts), whose union is the type.
export const RefundStatus = {
  PENDING: 'PENDING',
  AUTHORIZED: 'AUTHORIZED',
  EXECUTED: 'EXECUTED',
  FAILED: 'FAILED',
} as const satisfies { [K in RefundStatusName]: K };
export type RefundStatus = RefundStatusName;

registerEnumType(RefundStatus, { name: 'RefundStatus' });
