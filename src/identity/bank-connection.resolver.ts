import { Args, Ctx, Mutation, Resolver } from 'type-graphql';
import { providerIdOf } from '../platform/graphql/node/global-id';
import { requireUser, type PrincipalContext } from '../platform/access/principal';
import { toBankConnection } from './bank-connection.mapper';
import { BANK_CONNECTION_TAG, BankConnection } from './bank-connection.type';
import { DisconnectBankArgs } from './disconnect-bank.args';
import type { IdentityService } from './identity.service';

/** What a bank connection holds (its accounts and cards) is resolved by the accounts module, which reads the bank. */
@Resolver(() => BankConnection)
export class BankConnectionResolver {
  constructor(private readonly identity: IdentityService) {}

  @Mutation(() => BankConnection, {
    description: "Revokes one of the signed-in user's bank connections: its data leaves the viewer, and the user's open subscriptions end.",
  })
  async disconnectBank(@Args() { connectionId }: DisconnectBankArgs, @Ctx() context: PrincipalContext): Promise<BankConnection> {
    const user = requireUser(context.principal);
    return toBankConnection(await this.identity.disconnectBank(user.userId, providerIdOf(connectionId, BANK_CONNECTION_TAG)));
  }
}
