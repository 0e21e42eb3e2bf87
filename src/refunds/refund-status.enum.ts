import { registerEnumType } from 'type-graphql';

// Values equal the names so a status reads the same in code, in stores and on the wire; mapping from the
// provider's lowercase statuses happens where provider objects are mapped.
export enum RefundStatus {
  PENDING = 'PENDING',
  AUTHORIZED = 'AUTHORIZED',
  EXECUTED = 'EXECUTED',
  FAILED = 'FAILED',
}

registerEnumType(RefundStatus, { name: 'RefundStatus' });
