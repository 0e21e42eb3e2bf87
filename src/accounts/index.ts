import { AccountGraphService, type AccountGraphDeps } from './account.service';
import { AccountResolver } from './account.resolver';
import { CardResolver } from './card.resolver';
import { ViewerResolver } from './viewer.resolver';
import { BankConnectionHoldingsResolver } from './bank-connection-holdings.resolver';

export { AccountGraphService, AccountReads, type AccountGraphDeps, type AccountRecord, type CardRecord, type ReadOptions } from './account.service';
export { AccountResolver, BankConnectionHoldingsResolver, CardResolver, ViewerResolver };

export { ViewerIdResolver } from './viewer-id.resolver';
export { accountReads } from './viewer.resolver';
export { Account } from './account.type';
export { AccountBalance } from './account-balance.type';
export { AccountNumber } from './account-number.type';
export { Card } from './card.type';
export { CardBalance } from './card-balance.type';
export { Provider } from './provider.type';
export { Transaction } from './transaction.type';
export { TransactionConnection } from './transaction-connection.type';
export { TransactionEdge } from './transaction-edge.type';
export { TransactionMeta } from './transaction-meta.type';
export { Viewer } from './viewer.type';
export { toAccount, toAccountBalance } from './account.mapper';
export { toCard, toCardBalance } from './card.mapper';
export { toTransaction } from './transaction.mapper';

/** The account graph's resolvers, given the service they call (for the gateway's resolver container). */
export function accountResolvers(accountGraph: AccountGraphService): object[] {
  return [
    new ViewerResolver(accountGraph),
    new AccountResolver(accountGraph),
    new CardResolver(accountGraph),
    new BankConnectionHoldingsResolver(accountGraph),
  ];
}
export { accountNodeTypes } from './account-node.resolver';
export { ACCOUNT_TAG } from './account.type';
export { CARD_TAG } from './card.type';

/** The account graph: what every feature that reads a user's accounts and cards asks. */
export interface Accounts {
  graph: AccountGraphService;
}

export function createAccounts(deps: AccountGraphDeps): Accounts {
  return { graph: new AccountGraphService(deps) };
}
