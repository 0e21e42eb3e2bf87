import { Args, Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import { BankConnection, toBankConnection } from '../identity';
import type { OperationContext } from '../platform/graphql/operation-context';
import type { AccountGraphService } from './account.service';
import { toAccountBalance } from './account.mapper';
import { AccountBalance } from './account-balance.type';
import { Account } from './account.type';
import { checkTransactionsArgs, toTransactionConnection } from './transaction-connection.mapper';
import { TransactionConnection } from './transaction-connection.type';
import { holderRef, toTransaction } from './transaction.mapper';
import { Transaction } from './transaction.type';
import { TransactionsArgs } from './transactions.args';
import { accountReads } from './viewer.resolver';

@Resolver(() => Account)
export class AccountResolver {
  constructor(private readonly accountGraph: AccountGraphService) {}

  /** From the connections read once per request, so it costs no provider call. */
  @FieldResolver(() => BankConnection, { description: 'The bank connection this account was read through.' })
  async connection(@Root() account: Account, @Ctx() context: OperationContext): Promise<BankConnection> {
    return toBankConnection(await accountReads(context, this.accountGraph).activeConnection(account.connectionId));
  }

  @FieldResolver(() => AccountBalance, { nullable: true })
  async balance(@Root() account: Account, @Ctx() context: OperationContext): Promise<AccountBalance | null> {
    const balance = await accountReads(context, this.accountGraph).accountBalance(holderRef(account));
    return balance ? toAccountBalance(balance) : null;
  }

  @FieldResolver(() => TransactionConnection)
  async transactions(@Root() account: Account, @Args() args: TransactionsArgs, @Ctx() context: OperationContext): Promise<TransactionConnection> {
    checkTransactionsArgs(args);
    const list = await accountReads(context, this.accountGraph).transactions('account', holderRef(account), {
      from: args.from ?? undefined,
      to: args.to ?? undefined,
    });
    return toTransactionConnection(list, { list: 'a', holderId: account.accountId }, args.first, args.after);
  }

  @FieldResolver(() => [Transaction])
  async pendingTransactions(@Root() account: Account, @Ctx() context: OperationContext): Promise<Transaction[]> {
    return (await accountReads(context, this.accountGraph).pendingTransactions('account', holderRef(account))).map((transaction) =>
      toTransaction(transaction, { list: 'ap', holderId: account.accountId }),
    );
  }
}
