import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';
import { Node } from '../platform/graphql/node/node.type';
import { Account } from './account.type';
import { Card } from './card.type';

/**
 * The signed-in user's corner of the graph. Every field is resolved by @FieldResolver methods, so all are optional
 * here: a resolver returns `new Viewer()` (or `{}`) and the fields fill in on demand. Fields other features own
 * (payouts, verifiedBeneficiaries, connections) are declared by their own @FieldResolver, so this type imports
 * none of them. `account` and `card` get their `id` argument from the field
 * resolver's @Args() IdArgs.
 */
@ObjectType({ simpleResolvers: true, implements: Node })
export class Viewer implements Node {
  @Field(() => ID, { description: "The durable user's id: the same across sign-ins, sessions and bank connections." })
  id!: string;

  @Field(() => [Account])
  accounts?: Account[];

  @Field(() => Account, { nullable: true })
  account?: Account | null;

  @Field(() => [Card])
  cards?: Card[];

  @Field(() => Card, { nullable: true })
  card?: Card | null;
}
