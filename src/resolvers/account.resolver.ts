import { Args, Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { GatewayContext } from '../context';
import { toAccountBalance } from '../mappers/account.mapper';
import { AccountBalance } from '../schema/account-balance.type';
import { Account } from '../schema/account.type';
import { TransactionConnection } from '../schema/transaction-connection.type';
import { Transaction } from '../schema/transaction.type';
import { TransactionsArgs } from '../schema/transactions.args';
import { pendingTransactions, transactionConnection } from './transactions.loader';

@Resolver(() => Account)
export class AccountResolver {
  @FieldResolver(() => AccountBalance, { nullable: true })
  async balance(@Root() account: Account, @Ctx() context: GatewayContext): Promise<AccountBalance | null> {
    const [balance] = await context.dataLoaders().load({ resource: 'accountBalance', id: account.id });
    return balance ? toAccountBalance(balance) : null;
  }

  @FieldResolver(() => TransactionConnection)
  transactions(@Root() account: Account, @Args() args: TransactionsArgs, @Ctx() context: GatewayContext): Promise<TransactionConnection> {
    return transactionConnection(context, 'account', account.id, args);
  }

  @FieldResolver(() => [Transaction])
  pendingTransactions(@Root() account: Account, @Ctx() context: GatewayContext): Promise<Transaction[]> {
    return pendingTransactions(context, 'account', account.id);
  }
}
