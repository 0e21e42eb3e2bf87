import 'reflect-metadata';
import { Field, ObjectType } from 'type-graphql';
import { DateTimeScalar } from '../platform/graphql/scalars/date-time.scalar';
import { DateScalar } from '../platform/graphql/scalars/date.scalar';
import { DecimalScalar, type DecimalValue } from '../platform/graphql/scalars/decimal.scalar';

@ObjectType({ simpleResolvers: true })
export class CardBalance {
  @Field(() => String)
  currency!: string;

  @Field(() => DecimalScalar)
  available!: DecimalValue;

  @Field(() => DecimalScalar)
  current!: DecimalValue;

  @Field(() => DecimalScalar, { nullable: true })
  creditLimit?: DecimalValue | null;

  @Field(() => DecimalScalar, { nullable: true })
  lastStatementBalance?: DecimalValue | null;

  @Field(() => DateScalar, { nullable: true })
  lastStatementDate?: string | null;

  @Field(() => DecimalScalar, { nullable: true })
  paymentDue?: DecimalValue | null;

  @Field(() => DateScalar, { nullable: true })
  paymentDueDate?: string | null;

  @Field(() => DateTimeScalar)
  updatedAt!: string;
}
