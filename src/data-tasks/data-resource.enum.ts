import { registerEnumType } from 'type-graphql';
import type { DataResource as DataResourceName } from './data-task.model';

// Values equal the names; see RefundStatus. The domain's union (data-task.model.ts) is the type.
export const DataResource = {
  ACCOUNTS: 'ACCOUNTS',
  ACCOUNT_TRANSACTIONS: 'ACCOUNT_TRANSACTIONS',
  ACCOUNT_BALANCE: 'ACCOUNT_BALANCE',
  CARDS: 'CARDS',
  CARD_TRANSACTIONS: 'CARD_TRANSACTIONS',
  CARD_BALANCE: 'CARD_BALANCE',
} as const satisfies { [K in DataResourceName]: K };
export type DataResource = DataResourceName;

registerEnumType(DataResource, { name: 'DataResource' });
