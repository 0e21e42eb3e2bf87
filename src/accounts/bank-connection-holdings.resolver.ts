import { Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import { BankConnection, ConnectionStatus } from '../identity';
import type { OperationContext } from '../platform/graphql/operation-context';
import type { AccountGraphService } from './account.service';
import { toAccount } from './account.mapper';
import { Account } from './account.type';
import { toCard } from './card.mapper';
import { Card } from './card.type';
import { accountReads } from './viewer.resolver';

/** The accounts and cards read through one of identity's bank connections. */
@Resolver(() => BankConnection)
export class BankConnectionHoldingsResolver {
  constructor(private readonly accountGraph: AccountGraphService) {}

  /** Null for a connection that is not active; a failing bank's error lands here, at this connection's path. */
  @FieldResolver(() => [Account], { nullable: true })
  async accounts(@Root() connection: BankConnection, @Ctx() context: OperationContext): Promise<Account[] | null> {
    if (connection.status !== ConnectionStatus.ACTIVE) return null;
    return (await accountReads(context, this.accountGraph).accountsOf(connection.connectionId)).map((account) => toAccount(account, connection.connectionId));
  }

  @FieldResolver(() => [Card], { nullable: true })
  async cards(@Root() connection: BankConnection, @Ctx() context: OperationContext): Promise<Card[] | null> {
    if (connection.status !== ConnectionStatus.ACTIVE) return null;
    return (await accountReads(context, this.accountGraph).cardsOf(connection.connectionId)).map((card) => toCard(card, connection.connectionId));
  }
}
