import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';
import { Refund } from './refund.type';
import { MinorUnitsScalar } from '../platform/graphql/scalars/minor-units.scalar';

@ObjectType({ simpleResolvers: true })
export class Payment {
  @Field(() => ID)
  id!: string;

  // Both come from the payment's refund list, fetched by @FieldResolver methods of the payment resolver; optional
  // so a Payment can be returned knowing only its id.

  @Field(() => [Refund])
  refunds?: Refund[];

  @Field(() => MinorUnitsScalar, { description: 'Sum of the refunds that have not failed.' })
  refundedAmountInMinor?: number;
}
