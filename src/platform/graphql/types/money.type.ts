import 'reflect-metadata';
import { Field, ObjectType } from 'type-graphql';
import { DecimalScalar, type DecimalValue } from '../scalars/decimal.scalar';

@ObjectType({ simpleResolvers: true })
export class Money {
  @Field(() => DecimalScalar)
  amount!: DecimalValue;

  @Field(() => String)
  currency!: string;
}
