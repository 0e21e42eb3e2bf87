import { Args, Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { GatewayContext } from '../context';
import { toBankConnection } from '../mappers/bank-connection.mapper';
import { BankConnection } from '../schema/bank-connection.type';
import { toCardBalance } from '../mappers/card.mapper';
import { CardBalance } from '../schema/card-balance.type';
import { Card } from '../schema/card.type';
import { TransactionConnection } from '../schema/transaction-connection.type';
import { Transaction } from '../schema/transaction.type';
import { TransactionsArgs } from '../schema/transactions.args';
import { pendingTransactions, transactionConnection } from './transactions.loader';

@Resolver(() => Card)
export class CardResolver {
  /** From the connections read once per request, so it costs no provider call. */
  @FieldResolver(() => BankConnection, { description: 'The bank connection this card was read through.' })
  async connection(@Root() card: Card, @Ctx() context: GatewayContext): Promise<BankConnection> {
    return toBankConnection(await context.activeConnection(card.connectionId));
  }

  @FieldResolver(() => CardBalance, { nullable: true })
  async balance(@Root() card: Card, @Ctx() context: GatewayContext): Promise<CardBalance | null> {
    const [balance] = await context.loadersFor(card.connectionId).load({ resource: 'cardBalance', id: card.id });
    return balance ? toCardBalance(balance) : null;
  }

  @FieldResolver(() => TransactionConnection)
  transactions(@Root() card: Card, @Args() args: TransactionsArgs, @Ctx() context: GatewayContext): Promise<TransactionConnection> {
    return transactionConnection(context, 'card', card, args);
  }

  @FieldResolver(() => [Transaction])
  pendingTransactions(@Root() card: Card, @Ctx() context: GatewayContext): Promise<Transaction[]> {
    return pendingTransactions(context, 'card', card);
  }
}
