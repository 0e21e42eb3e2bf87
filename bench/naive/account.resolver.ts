import { Args, Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { ProviderAccountBalance, ProviderTransaction } from '../../src/platform/provider/provider-types';
import { toAccountBalance } from '../../src/accounts/account.mapper';
import { toTransactionConnection } from '../../src/accounts/transaction-connection.mapper';
import { AccountBalance } from '../../src/accounts/account-balance.type';
import { Account } from '../../src/accounts/account.type';
import { TransactionConnection } from '../../src/accounts/transaction-connection.type';
import { TransactionsArgs } from '../../src/accounts/transactions.args';
import type { NaiveContext } from './naive.context';
import { providerResults } from './provider.fetch';

@Resolver(() => Account)
export class NaiveAccountResolver {
  @FieldResolver(() => AccountBalance, { nullable: true })
  async balance(@Root() account: Account, @Ctx() context: NaiveContext): Promise<AccountBalance | null> {
    const [balance] = await providerResults<ProviderAccountBalance>(context, `/data/v1/accounts/${encodeURIComponent(account.accountId)}/balance`);
    return balance ? toAccountBalance(balance) : null;
  }

  @FieldResolver(() => TransactionConnection)
  async transactions(@Root() account: Account, @Args() args: TransactionsArgs, @Ctx() context: NaiveContext): Promise<TransactionConnection> {
    const list = await providerResults<ProviderTransaction>(context, `/data/v1/accounts/${encodeURIComponent(account.accountId)}/transactions`, {
      from: args.from,
      to: args.to,
    });
    return toTransactionConnection(list, { list: 'a', holderId: account.accountId }, args.first, args.after);
  }
}
