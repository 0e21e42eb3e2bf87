import { Args, Ctx, FieldResolver, Info, Query, Resolver } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { requireUser } from '../platform/access/principal';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { toAccount } from './account.mapper';
import { BankConnection, toBankConnection } from '../identity';
import { toCard } from './card.mapper';
import { Account } from './account.type';
import { Card } from './card.type';
import { IdArgs } from '../platform/graphql/types/id.args';
import { Viewer } from './viewer.type';
import { fromEveryConnection } from './every-connection';

@Resolver(() => Viewer)
export class ViewerResolver {
  @Query(() => Viewer, { description: 'The signed-in end user. Needs an end-user session; UNAUTHENTICATED otherwise.' })
  viewer(@Ctx() context: GatewayContext): Viewer {
    requireUser(context.principal);
    return new Viewer();
  }

  @FieldResolver(() => [BankConnection])
  async connections(@Ctx() context: GatewayContext): Promise<BankConnection[]> {
    return (await context.connections()).map(toBankConnection);
  }

  /** Every active connection's accounts, read in parallel. */
  @FieldResolver(() => [Account])
  accounts(@Ctx() context: GatewayContext, @Info() info: GraphQLResolveInfo): Promise<Account[]> {
    return fromEveryConnection(context, info, async (connection) => {
      // Parsed once here (a provider list parses on every read, see provider-list.ts), then read twice.
      const accounts = (await context.loadersFor(connection.id).load({ resource: 'accounts' })).slice();
      await context.services.connections.recordSeen(
        connection,
        'account',
        accounts.map((account) => account.account_id),
      );
      return accounts.map((account) => toAccount(account, connection.id));
    });
  }

  /** From the accounts lists (the provider has no single-account call), so it costs nothing next to `accounts`. */
  @FieldResolver(() => Account, { nullable: true })
  async account(@Args() { id }: IdArgs, @Ctx() context: GatewayContext, @Info() info: GraphQLResolveInfo): Promise<Account | null> {
    return (await this.accounts(context, info)).find((account) => account.id === id) ?? null;
  }

  @FieldResolver(() => [Card])
  cards(@Ctx() context: GatewayContext, @Info() info: GraphQLResolveInfo): Promise<Card[]> {
    return fromEveryConnection(context, info, async (connection) => {
      const cards = (await context.loadersFor(connection.id).load({ resource: 'cards' })).slice();
      await context.services.connections.recordSeen(
        connection,
        'card',
        cards.map((card) => card.account_id),
      );
      return cards.map((card) => toCard(card, connection.id));
    });
  }

  @FieldResolver(() => Card, { nullable: true })
  async card(@Args() { id }: IdArgs, @Ctx() context: GatewayContext, @Info() info: GraphQLResolveInfo): Promise<Card | null> {
    return (await this.cards(context, info)).find((card) => card.id === id) ?? null;
  }
}
