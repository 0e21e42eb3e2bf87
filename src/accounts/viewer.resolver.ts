import { Args, Ctx, FieldResolver, Info, Query, Resolver } from 'type-graphql';
import { responsePathAsArray, type GraphQLResolveInfo } from 'graphql';
import { BankConnection, toBankConnection } from '../identity';
import { requireUser } from '../platform/access/principal';
import { scopedKey, type OperationContext } from '../platform/graphql/operation-context';
import { IdArgs } from '../platform/graphql/types/id.args';
import { providerIdOf } from '../platform/graphql/node/global-id';
import type { AccountGraphService, AccountReads } from './account.service';
import { toAccount } from './account.mapper';
import { Account, ACCOUNT_TAG } from './account.type';
import { toCard } from './card.mapper';
import { Card, CARD_TAG } from './card.type';
import { reportConnectionFailures } from './connection-failure.mapper';
import type { FromEveryConnection } from './every-connection';
import { Viewer } from './viewer.type';

const ACCOUNT_READS = scopedKey<AccountReads>('account reads');

/** The signed-in user's reads for this operation, made on first use; UNAUTHENTICATED (or FORBIDDEN) for anyone else. */
export function accountReads(context: OperationContext, accounts: AccountGraphService): AccountReads {
  const user = requireUser(context.principal);
  return context.scoped(ACCOUNT_READS, () =>
    accounts.readsFor(user.userId, { cacheMode: context.cacheMode, call: context.callOptions(), onRead: (freshUntilMs) => context.noteDataRead(freshUntilMs) }),
  );
}

@Resolver(() => Viewer)
export class ViewerResolver {
  constructor(private readonly accountGraph: AccountGraphService) {}

  @Query(() => Viewer, { description: 'The signed-in end user. Needs an end-user session; UNAUTHENTICATED otherwise.' })
  viewer(@Ctx() context: OperationContext): Viewer {
    requireUser(context.principal);
    return new Viewer();
  }

  @FieldResolver(() => [BankConnection], { description: "The user's bank connections, oldest first (revoked ones are left out)." })
  async connections(@Ctx() context: OperationContext): Promise<BankConnection[]> {
    return (await accountReads(context, this.accountGraph).connections()).map(toBankConnection);
  }

  /** Every active connection's accounts, read in parallel. */
  @FieldResolver(() => [Account])
  async accounts(@Ctx() context: OperationContext, @Info() info: GraphQLResolveInfo): Promise<Account[]> {
    const read = await accountReads(context, this.accountGraph).accounts();
    return answered(context, info, read).map(({ account, connectionId }) => toAccount(account, connectionId));
  }

  /**
   * From the accounts lists (the provider has no single-account call), so it costs nothing next to `accounts`.
   * Takes the account's global id or the provider's account id.
   */
  @FieldResolver(() => Account, { nullable: true })
  async account(@Args() { id }: IdArgs, @Ctx() context: OperationContext, @Info() info: GraphQLResolveInfo): Promise<Account | null> {
    return (await this.accounts(context, info)).find((account) => account.accountId === providerIdOf(id, ACCOUNT_TAG)) ?? null;
  }

  @FieldResolver(() => [Card])
  async cards(@Ctx() context: OperationContext, @Info() info: GraphQLResolveInfo): Promise<Card[]> {
    const read = await accountReads(context, this.accountGraph).cards();
    return answered(context, info, read).map(({ card, connectionId }) => toCard(card, connectionId));
  }

  @FieldResolver(() => Card, { nullable: true })
  async card(@Args() { id }: IdArgs, @Ctx() context: OperationContext, @Info() info: GraphQLResolveInfo): Promise<Card | null> {
    return (await this.cards(context, info)).find((card) => card.cardId === providerIdOf(id, CARD_TAG)) ?? null;
  }
}

/** What the connections gave; each one that failed leaves an error at this field's path. */
function answered<T>(context: OperationContext, info: GraphQLResolveInfo, read: FromEveryConnection<T>): T[] {
  if (read.failures.length > 0) reportConnectionFailures(context, responsePathAsArray(info.path), read.failures);
  return read.items;
}
