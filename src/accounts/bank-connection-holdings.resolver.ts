import { Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import { BankConnection, ConnectionStatus } from '../identity';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { toAccount } from './account.mapper';
import { Account } from './account.type';
import { toCard } from './card.mapper';
import { Card } from './card.type';

/** The accounts and cards read through one of identity's bank connections. */
@Resolver(() => BankConnection)
export class BankConnectionHoldingsResolver {
  /** Null for a connection that is not active; a failing bank's error lands here, at this connection's path. */
  @FieldResolver(() => [Account], { nullable: true })
  async accounts(@Root() connection: BankConnection, @Ctx() context: GatewayContext): Promise<Account[] | null> {
    if (connection.status !== ConnectionStatus.ACTIVE) return null;
    return (await context.loadersFor(connection.id).load({ resource: 'accounts' })).map((account) => toAccount(account, connection.id));
  }

  @FieldResolver(() => [Card], { nullable: true })
  async cards(@Root() connection: BankConnection, @Ctx() context: GatewayContext): Promise<Card[] | null> {
    if (connection.status !== ConnectionStatus.ACTIVE) return null;
    return (await context.loadersFor(connection.id).load({ resource: 'cards' })).map((card) => toCard(card, connection.id));
  }
}
