import 'reflect-metadata';
import { Field, ObjectType } from 'type-graphql';
import { JSONScalar } from '../platform/graphql/scalars/json.scalar';

@ObjectType({ simpleResolvers: true })
export class TransactionMeta {
  @Field(() => String, { nullable: true })
  bankTransactionId?: string | null;

  @Field(() => String, { nullable: true })
  providerTransactionCategory?: string | null;

  @Field(() => String, { nullable: true })
  cardNumber?: string | null;

  @Field(() => String, { nullable: true })
  location?: string | null;

  @Field(() => JSONScalar, { description: "The provider's meta object as sent." })
  raw!: Record<string, unknown>;
}
