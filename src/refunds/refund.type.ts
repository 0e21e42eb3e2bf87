import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';
import { RefundStatus } from './refund-status.enum';
import { DateTimeScalar } from '../platform/graphql/scalars/date-time.scalar';
import { MinorUnitsScalar } from '../platform/graphql/scalars/minor-units.scalar';

@ObjectType({ simpleResolvers: true })
export class Refund {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  paymentId!: string;

  @Field(() => MinorUnitsScalar)
  amountInMinor!: number;

  @Field(() => String)
  currency!: string;

  @Field(() => RefundStatus)
  status!: RefundStatus;

  @Field(() => String)
  reference!: string;

  @Field(() => DateTimeScalar)
  createdAt!: string;

  @Field(() => DateTimeScalar, { nullable: true })
  authorizedAt?: string | null;

  @Field(() => DateTimeScalar, { nullable: true })
  executedAt?: string | null;

  @Field(() => String, { nullable: true })
  failureReason?: string | null;
}
