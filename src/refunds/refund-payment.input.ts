import 'reflect-metadata';
import { Field, ID, InputType } from 'type-graphql';
import { MinorUnitsScalar } from '../platform/graphql/scalars/minor-units.scalar';

@InputType()
export class RefundPaymentInput {
  @Field(() => ID)
  paymentId!: string;

  @Field(() => MinorUnitsScalar, { nullable: true, description: 'Omitted: the full value of the payment.' })
  amountInMinor?: number | null;

  @Field(() => String, { description: "At most 18 characters; shown on the payer's statement." })
  reference!: string;

  @Field(() => ID, {
    nullable: true,
    description: 'A UUID; one is generated when omitted. The same key twice creates one refund.',
  })
  idempotencyKey?: string | null;
}
