import { Args, Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import { BankConnection, toBankConnection } from '../identity';
import type { OperationContext } from '../platform/graphql/operation-context';
import type { AccountGraphService } from './account.service';
import { toCardBalance } from './card.mapper';
import { CardBalance } from './card-balance.type';
import { Card } from './card.type';
import { checkTransactionsArgs, toTransactionConnection } from './transaction-connection.mapper';
import { TransactionConnection } from './transaction-connection.type';
import { holderRef, toTransaction } from './transaction.mapper';
import { Transaction } from './transaction.type';
import { TransactionsArgs } from './transactions.args';
import { accountReads } from './viewer.resolver';

@Resolver(() => Card)
export class CardResolver {
  constructor(private readonly accountGraph: AccountGraphService) {}

  /** From the connections read once per request, so it costs no provider call. */
  @FieldResolver(() => BankConnection, { description: 'The bank connection this card was read through.' })
  async connection(@Root() card: Card, @Ctx() context: OperationContext): Promise<BankConnection> {
    return toBankConnection(await accountReads(context, this.accountGraph).activeConnection(card.connectionId));
  }

  @FieldResolver(() => CardBalance, { nullable: true })
  async balance(@Root() card: Card, @Ctx() context: OperationContext): Promise<CardBalance | null> {
    const balance = await accountReads(context, this.accountGraph).cardBalance(holderRef(card));
    return balance ? toCardBalance(balance) : null;
  }

  @FieldResolver(() => TransactionConnection)
  async transactions(@Root() card: Card, @Args() args: TransactionsArgs, @Ctx() context: OperationContext): Promise<TransactionConnection> {
    checkTransactionsArgs(args);
    const list = await accountReads(context, this.accountGraph).transactions('card', holderRef(card), {
      from: args.from ?? undefined,
      to: args.to ?? undefined,
    });
    return toTransactionConnection(list, { list: 'c', holderId: card.cardId }, args.first, args.after);
  }

  @FieldResolver(() => [Transaction])
  async pendingTransactions(@Root() card: Card, @Ctx() context: OperationContext): Promise<Transaction[]> {
    return (await accountReads(context, this.accountGraph).pendingTransactions('card', holderRef(card))).map((transaction) =>
      toTransaction(transaction, { list: 'cp', holderId: card.cardId }),
    );
  }
}
