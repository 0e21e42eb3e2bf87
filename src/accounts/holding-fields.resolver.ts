import { Args, Ctx, FieldResolver, Resolver, Root, type ClassType } from 'type-graphql';
import { BankConnection, toBankConnection } from '../identity';
import type { OperationContext } from '../platform/graphql/operation-context';
import type { AccountGraphService, AccountReads, Holder } from './account.service';
import type { Account } from './account.type';
import type { Card } from './card.type';
import { checkTransactionsArgs, toTransactionConnection } from './transaction-connection.mapper';
import { TransactionConnection } from './transaction-connection.type';
import { transactionList } from './transaction-list';
import { holderRef, toTransaction } from './transaction.mapper';
import { Transaction } from './transaction.type';
import { TransactionsArgs } from './transactions.args';
import { accountReads } from './viewer.resolver';

/** What an account and a card differ in; their fields are otherwise read the same way. */
export interface HoldingKind<T extends Account | Card, B extends object> {
  holder: Holder;
  type: ClassType<T>;
  balanceType: ClassType<B>;
  balance(reads: AccountReads, holding: T): Promise<B | null>;
}

/** The field resolvers of an account or a card: its connection, balance, transactions and pending transactions. */
export function holdingFieldsResolver<T extends Account | Card, B extends object>(kind: HoldingKind<T, B>): ClassType {
  @Resolver(() => kind.type)
  class HoldingFieldsResolver {
    constructor(private readonly accountGraph: AccountGraphService) {}

    /** From the connections read once per request, so it costs no provider call. */
    @FieldResolver(() => BankConnection, { description: `The bank connection this ${kind.holder} was read through.` })
    async connection(@Root() holding: T, @Ctx() context: OperationContext): Promise<BankConnection> {
      return toBankConnection(await accountReads(context, this.accountGraph).activeConnection(holding.connectionId));
    }

    @FieldResolver(() => kind.balanceType, { nullable: true })
    balance(@Root() holding: T, @Ctx() context: OperationContext): Promise<B | null> {
      return kind.balance(accountReads(context, this.accountGraph), holding);
    }

    @FieldResolver(() => TransactionConnection)
    async transactions(@Root() holding: T, @Args() args: TransactionsArgs, @Ctx() context: OperationContext): Promise<TransactionConnection> {
      checkTransactionsArgs(args);
      const ref = holderRef(holding);
      const list = await accountReads(context, this.accountGraph).transactions(kind.holder, ref, {
        from: args.from ?? undefined,
        to: args.to ?? undefined,
      });
      return toTransactionConnection(list, { list: transactionList(kind.holder, false), holderId: ref.id }, args.first, args.after);
    }

    @FieldResolver(() => [Transaction])
    async pendingTransactions(@Root() holding: T, @Ctx() context: OperationContext): Promise<Transaction[]> {
      const ref = holderRef(holding);
      return (await accountReads(context, this.accountGraph).pendingTransactions(kind.holder, ref)).map((transaction) =>
        toTransaction(transaction, { list: transactionList(kind.holder, true), holderId: ref.id }),
      );
    }
  }
  return HoldingFieldsResolver;
}
