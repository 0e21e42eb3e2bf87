import { requireUser } from '../platform/access/principal';
import type { OperationContext } from '../platform/graphql/operation-context';
import type { NodeType } from '../platform/graphql/node/node.registry';
import { toBankConnection } from './bank-connection.mapper';
import { BANK_CONNECTION_TAG } from './bank-connection.type';
import type { IdentityService } from './identity.service';

/** node(id:) for bank connections: the signed-in user's own, as viewer.connections lists them (revoked ones are not). */
export function bankConnectionNodeType(identity: IdentityService): NodeType {
  return {
    tag: BANK_CONNECTION_TAG,
    arity: 1,
    async load(keys: readonly (readonly string[])[], context: OperationContext) {
      if (context.principal.kind !== 'user') return keys.map(() => null);
      const connections = await identity.connectionsOf(requireUser(context.principal).userId);
      return keys.map(([id]) => {
        const found = connections.find((connection) => connection.id === id);
        return found ? toBankConnection(found) : null;
      });
    },
  };
}
