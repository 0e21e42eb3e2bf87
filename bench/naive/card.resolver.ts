import { Args, Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { ProviderCardBalance, ProviderTransaction } from '../../src/datasources/provider-types';
import { toCardBalance } from '../../src/mappers/card.mapper';
import { toTransactionConnection } from '../../src/mappers/transaction-connection.mapper';
import { CardBalance } from '../../src/schema/card-balance.type';
import { Card } from '../../src/schema/card.type';
import { TransactionConnection } from '../../src/schema/transaction-connection.type';
import { TransactionsArgs } from '../../src/schema/transactions.args';
import type { NaiveContext } from './naive.context';
import { providerResults } from './provider.fetch';

@Resolver(() => Card)
export class NaiveCardResolver {
  @FieldResolver(() => CardBalance, { nullable: true })
  async balance(@Root() card: Card, @Ctx() context: NaiveContext): Promise<CardBalance | null> {
    const [balance] = await providerResults<ProviderCardBalance>(context, `/data/v1/cards/${encodeURIComponent(card.id)}/balance`);
    return balance ? toCardBalance(balance) : null;
  }

  @FieldResolver(() => TransactionConnection)
  async transactions(@Root() card: Card, @Args() args: TransactionsArgs, @Ctx() context: NaiveContext): Promise<TransactionConnection> {
    const list = await providerResults<ProviderTransaction>(context, `/data/v1/cards/${encodeURIComponent(card.id)}/transactions`, {
      from: args.from,
      to: args.to,
    });
    return toTransactionConnection(list, args.first, args.after);
  }
}
