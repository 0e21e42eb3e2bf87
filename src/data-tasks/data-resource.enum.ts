import { registerEnumType } from 'type-graphql';

// Values equal the names; see RefundStatus.
export enum DataResource {
  ACCOUNTS = 'ACCOUNTS',
  ACCOUNT_TRANSACTIONS = 'ACCOUNT_TRANSACTIONS',
  ACCOUNT_BALANCE = 'ACCOUNT_BALANCE',
  CARDS = 'CARDS',
  CARD_TRANSACTIONS = 'CARD_TRANSACTIONS',
  CARD_BALANCE = 'CARD_BALANCE',
}

registerEnumType(DataResource, { name: 'DataResource' });
