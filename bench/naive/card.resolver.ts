import { Args, Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { ProviderCardBalance, ProviderTransaction } from '../../src/platform/provider/provider-types';
import { toCardBalance } from '../../src/accounts/card.mapper';
import { toTransactionConnection } from '../../src/accounts/transaction-connection.mapper';
import { CardBalance } from '../../src/accounts/card-balance.type';
import { Card } from '../../src/accounts/card.type';
import { TransactionConnection } from '../../src/accounts/transaction-connection.type';
import { TransactionsArgs } from '../../src/accounts/transactions.args';
import type { NaiveContext } from './naive.context';
import { providerResults } from './provider.fetch';

@Resolver(() => Card)
export class NaiveCardResolver {
  @FieldResolver(() => CardBalance, { nullable: true })
  async balance(@Root() card: Card, @Ctx() context: NaiveContext): Promise<CardBalance | null> {
    const [balance] = await providerResults<ProviderCardBalance>(context, `/data/v1/cards/${encodeURIComponent(card.cardId)}/balance`);
    return balance ? toCardBalance(balance) : null;
  }

  @FieldResolver(() => TransactionConnection)
  async transactions(@Root() card: Card, @Args() args: TransactionsArgs, @Ctx() context: NaiveContext): Promise<TransactionConnection> {
    const list = await providerResults<ProviderTransaction>(context, `/data/v1/cards/${encodeURIComponent(card.cardId)}/transactions`, {
      from: args.from,
      to: args.to,
    });
    return toTransactionConnection(list, { list: 'c', holderId: card.cardId }, args.first, args.after);
  }
}
