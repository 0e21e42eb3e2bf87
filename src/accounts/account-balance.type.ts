import 'reflect-metadata';
import { Field, ObjectType } from 'type-graphql';
import { DateTimeScalar } from '../platform/graphql/scalars/date-time.scalar';
import { DecimalScalar, type DecimalValue } from '../platform/graphql/scalars/decimal.scalar';

@ObjectType({ simpleResolvers: true })
export class AccountBalance {
  @Field(() => String)
  currency!: string;

  @Field(() => DecimalScalar)
  available!: DecimalValue;

  @Field(() => DecimalScalar)
  current!: DecimalValue;

  @Field(() => DecimalScalar, { nullable: true })
  overdraft?: DecimalValue | null;

  @Field(() => DateTimeScalar)
  updatedAt!: string;
}
