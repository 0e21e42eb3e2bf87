import 'reflect-metadata';
import { ArgsType, Field, Int } from 'type-graphql';
import { DateScalar } from '../platform/graphql/scalars/date.scalar';

/** Account.transactions and Card.transactions. */
@ArgsType()
export class TransactionsArgs {
  @Field(() => DateScalar, { nullable: true })
  from?: string | null;

  @Field(() => DateScalar, { nullable: true })
  to?: string | null;

  // A client may still send an explicit null, which GraphQL lets through past the default.
  @Field(() => Int, { nullable: true, defaultValue: 50 })
  first!: number | null;

  @Field(() => String, { nullable: true })
  after?: string | null;
}
