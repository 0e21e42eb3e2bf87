import { Ctx, FieldResolver, Query, Resolver } from 'type-graphql';
import type { ProviderAccount, ProviderCard } from '../../src/platform/provider/provider-types';
import { toAccount } from '../../src/accounts/account.mapper';
import { toCard } from '../../src/accounts/card.mapper';
import { Account } from '../../src/accounts/account.type';
import { Card } from '../../src/accounts/card.type';
import { Viewer } from '../../src/accounts/viewer.type';
import type { NaiveContext } from './naive.context';
import { providerResults } from './provider.fetch';

@Resolver(() => Viewer)
export class NaiveViewerResolver {
  @Query(() => Viewer)
  viewer(): Viewer {
    return new Viewer();
  }

  @FieldResolver(() => [Account])
  async accounts(@Ctx() context: NaiveContext): Promise<Account[]> {
    return (await providerResults<ProviderAccount>(context, '/data/v1/accounts')).map((account) => toAccount(account, 'naive'));
  }

  @FieldResolver(() => [Card])
  async cards(@Ctx() context: NaiveContext): Promise<Card[]> {
    return (await providerResults<ProviderCard>(context, '/data/v1/cards')).map((card) => toCard(card, 'naive'));
  }
}
