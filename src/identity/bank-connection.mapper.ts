import type { BankConnectionRecord } from './connection.store';
import { BankConnection } from './bank-connection.type';
import { ConnectionStatus } from './connection-status.enum';

const STATUSES: Record<BankConnectionRecord['status'], ConnectionStatus> = {
  active: ConnectionStatus.ACTIVE,
  expired: ConnectionStatus.EXPIRED,
  revoked: ConnectionStatus.REVOKED,
};

export function toBankConnection(record: BankConnectionRecord): BankConnection {
  return Object.assign(new BankConnection(), { connectionId: record.id, providerId: record.providerId, status: STATUSES[record.status] });
}
