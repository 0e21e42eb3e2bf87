import 'reflect-metadata';
import { Field, ID, InterfaceType } from 'type-graphql';

/**
 * GraphQL Global Object Identification: every type with an identity implements Node, and Query.node(id:) finds
 * any of them again by that id alone.
 */
@InterfaceType({
  description:
    "An object with a global id: opaque, unique across every type, and accepted by Query.node and Query.nodes. The provider's own id stays on its own field (accountId, cardId, transactionId…).",
})
export abstract class Node {
  @Field(() => ID, { description: 'The global id: pass it to node(id:) or nodes(ids:); do not parse it.' })
  id!: string;
}
