import { Args, Ctx, FieldResolver, Mutation, Resolver, Root } from 'type-graphql';
import { requireUser } from './principal';
import type { GatewayContext } from '../platform/graphql/operation-context';
import { NotFoundError } from '../platform/errors/gateway-errors';
import { toAccount } from '../accounts/account.mapper';
import { toBankConnection } from './bank-connection.mapper';
import { toCard } from '../accounts/card.mapper';
import { Account } from '../accounts/account.type';
import { BankConnection } from './bank-connection.type';
import { Card } from '../accounts/card.type';
import { ConnectionStatus } from './connection-status.enum';
import { DisconnectBankArgs } from './disconnect-bank.args';

@Resolver(() => BankConnection)
export class BankConnectionResolver {
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

  @Mutation(() => BankConnection, {
    description: "Revokes one of the signed-in user's bank connections: its data leaves the viewer, and the user's open subscriptions end.",
  })
  async disconnectBank(@Args() { connectionId }: DisconnectBankArgs, @Ctx() context: GatewayContext): Promise<BankConnection> {
    const user = requireUser(context.principal);
    const revoked = await context.services.connections.revoke(user.userId, connectionId);
    if (!revoked) throw new NotFoundError('No bank connection with that id belongs to this user.');
    await context.services.live.dataTasks.forgetConnection(connectionId);
    await context.services.identityEvents.publish({ kind: 'disconnected', userId: user.userId, connectionId });
    return toBankConnection(revoked);
  }
}
