import { Args, Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { BankConnection, toBankConnection } from '../identity';
import { toAccountBalance } from './account.mapper';
import { AccountBalance } from './account-balance.type';
import { Account } from './account.type';
import { TransactionConnection } from './transaction-connection.type';
import { Transaction } from './transaction.type';
import { TransactionsArgs } from './transactions.args';
import { pendingTransactions, transactionConnection } from './transactions.loader';

@Resolver(() => Account)
export class AccountResolver {
  /** From the connections read once per request, so it costs no provider call. */
  @FieldResolver(() => BankConnection, { description: 'The bank connection this account was read through.' })
  async connection(@Root() account: Account, @Ctx() context: GatewayContext): Promise<BankConnection> {
    return toBankConnection(await context.activeConnection(account.connectionId));
  }

  @FieldResolver(() => AccountBalance, { nullable: true })
  async balance(@Root() account: Account, @Ctx() context: GatewayContext): Promise<AccountBalance | null> {
    const [balance] = await context.loadersFor(account.connectionId).load({ resource: 'accountBalance', id: account.id });
    return balance ? toAccountBalance(balance) : null;
  }

  @FieldResolver(() => TransactionConnection)
  transactions(@Root() account: Account, @Args() args: TransactionsArgs, @Ctx() context: GatewayContext): Promise<TransactionConnection> {
    return transactionConnection(context, 'account', account, args);
  }

  @FieldResolver(() => [Transaction])
  pendingTransactions(@Root() account: Account, @Ctx() context: GatewayContext): Promise<Transaction[]> {
    return pendingTransactions(context, 'account', account);
  }
}
