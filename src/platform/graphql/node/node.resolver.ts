import DataLoader from 'dataloader';
import { Arg, Ctx, ID, Query, Resolver } from 'type-graphql';
import { requireAnyPrincipal } from '../../access/principal';
import { BadUserInputError } from '../../errors/gateway-errors';
import { scopedKey, type OperationContext } from '../operation-context';
import { fromGlobalId } from './global-id';
import type { NodeRegistry } from './node.registry';
import { MAX_NODE_IDS } from './node-limits';
import { Node } from './node.type';

type NodeLoaders = Map<string, DataLoader<string, object | null>>;
const NODE_LOADERS = scopedKey<NodeLoaders>('node loaders');

/**
 * Query.node and Query.nodes. An id that is malformed, of no known type, of an object that does not exist, or of
 * one the caller cannot read through its own field is null: one answer for all of them, so nothing about other
 * users' objects can be learnt. Ids of one type within an operation are loaded in one batch.
 */
@Resolver()
export class NodeResolver {
  constructor(private readonly registry: NodeRegistry) {}

  @Query(() => Node, {
    nullable: true,
    description:
      'The object with this global id (Node.id), if this caller may read it through its own field; null otherwise, the same for an id that does not exist or is malformed.',
  })
  node(@Arg('id', () => ID) id: string, @Ctx() context: OperationContext): Promise<object | null> {
    requireAnyPrincipal(context.principal);
    return this.load(id, context);
  }

  @Query(() => [Node], {
    nullable: 'items',
    description: `The objects with these global ids, in the same order, each as node(id:) answers it (null where it would be null). At most ${MAX_NODE_IDS} ids.`,
  })
  nodes(@Arg('ids', () => [ID]) ids: string[], @Ctx() context: OperationContext): Promise<(object | null)[]> {
    requireAnyPrincipal(context.principal);
    if (ids.length > MAX_NODE_IDS) {
      throw new BadUserInputError(`ids takes at most ${MAX_NODE_IDS} ids; got ${ids.length}. Ask for the rest in another operation.`, 'ids');
    }
    return Promise.all(ids.map((id) => this.load(id, context)));
  }

  private load(id: string, context: OperationContext): Promise<object | null> {
    const decoded = fromGlobalId(id);
    const type = decoded && this.registry.find(decoded.tag);
    if (!decoded || !type || decoded.parts.length !== type.arity) return Promise.resolve(null);
    const loaders = context.scoped(NODE_LOADERS, (): NodeLoaders => new Map());
    let loader = loaders.get(type.tag);
    if (!loader) {
      loader = new DataLoader<string, object | null>(async (batch) => {
        // Every id in the batch decoded to this type once already, in load().
        const keys = batch.map((one) => fromGlobalId(one)!.parts);
        return type.load(keys, context);
      });
      loaders.set(type.tag, loader);
    }
    return loader.load(id);
  }
}
