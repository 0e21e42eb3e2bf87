import { Args, Ctx, FieldResolver, Query, Resolver } from 'type-graphql';
import { requireUser } from '../auth/principal';
import type { GatewayContext } from '../context';
import { toAccount } from '../mappers/account.mapper';
import { toCard } from '../mappers/card.mapper';
import { Account } from '../schema/account.type';
import { Card } from '../schema/card.type';
import { IdArgs } from '../schema/id.args';
import { Viewer } from '../schema/viewer.type';

@Resolver(() => Viewer)
export class ViewerResolver {
  @Query(() => Viewer, { description: 'The signed-in end user. Needs an end-user session; UNAUTHENTICATED otherwise.' })
  viewer(@Ctx() context: GatewayContext): Viewer {
    requireUser(context.principal);
    return new Viewer();
  }

  @FieldResolver(() => [Account])
  async accounts(@Ctx() context: GatewayContext): Promise<Account[]> {
    return (await context.dataLoaders().load({ resource: 'accounts' })).map(toAccount);
  }

  /** From the accounts list (the provider has no single-account call), so it costs nothing next to `accounts`. */
  @FieldResolver(() => Account, { nullable: true })
  async account(@Args() { id }: IdArgs, @Ctx() context: GatewayContext): Promise<Account | null> {
    const found = (await context.dataLoaders().load({ resource: 'accounts' })).find((account) => account.account_id === id);
    return found ? toAccount(found) : null;
  }

  @FieldResolver(() => [Card])
  async cards(@Ctx() context: GatewayContext): Promise<Card[]> {
    return (await context.dataLoaders().load({ resource: 'cards' })).map(toCard);
  }

  @FieldResolver(() => Card, { nullable: true })
  async card(@Args() { id }: IdArgs, @Ctx() context: GatewayContext): Promise<Card | null> {
    const found = (await context.dataLoaders().load({ resource: 'cards' })).find((card) => card.account_id === id);
    return found ? toCard(found) : null;
  }
}
