import { registerEnumType } from 'type-graphql';

// Values equal the names; the store keeps them in lower case (src/platform/db/tables.ts, ConnectionStatus).
export enum ConnectionStatus {
  ACTIVE = 'ACTIVE',
  EXPIRED = 'EXPIRED',
  REVOKED = 'REVOKED',
}

registerEnumType(ConnectionStatus, {
  name: 'ConnectionStatus',
  description: 'ACTIVE: usable. EXPIRED: the bank ended the consent; connect the bank again. REVOKED: disconnected or replaced.',
});
