import 'reflect-metadata';
import { ArgsType, Field } from 'type-graphql';
import { RefundPaymentInput } from './refund-payment.input';

/** Mutation.refundPayment. */
@ArgsType()
export class RefundPaymentArgs {
  @Field(() => RefundPaymentInput)
  input!: RefundPaymentInput;
}
