import { Args, Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { GatewayContext } from '../context';
import { toCardBalance } from '../mappers/card.mapper';
import { CardBalance } from '../schema/card-balance.type';
import { Card } from '../schema/card.type';
import { TransactionConnection } from '../schema/transaction-connection.type';
import { Transaction } from '../schema/transaction.type';
import { TransactionsArgs } from '../schema/transactions.args';
import { pendingTransactions, transactionConnection } from './transactions.loader';

@Resolver(() => Card)
export class CardResolver {
  @FieldResolver(() => CardBalance, { nullable: true })
  async balance(@Root() card: Card, @Ctx() context: GatewayContext): Promise<CardBalance | null> {
    const [balance] = await context.dataLoaders().load({ resource: 'cardBalance', id: card.id });
    return balance ? toCardBalance(balance) : null;
  }

  @FieldResolver(() => TransactionConnection)
  transactions(@Root() card: Card, @Args() args: TransactionsArgs, @Ctx() context: GatewayContext): Promise<TransactionConnection> {
    return transactionConnection(context, 'card', card.id, args);
  }

  @FieldResolver(() => [Transaction])
  pendingTransactions(@Root() card: Card, @Ctx() context: GatewayContext): Promise<Transaction[]> {
    return pendingTransactions(context, 'card', card.id);
  }
}
