import { Args, Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { BankConnection, toBankConnection } from '../identity';
import { toCardBalance } from './card.mapper';
import { CardBalance } from './card-balance.type';
import { Card } from './card.type';
import { TransactionConnection } from './transaction-connection.type';
import { Transaction } from './transaction.type';
import { TransactionsArgs } from './transactions.args';
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
