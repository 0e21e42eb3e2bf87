import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';
import { toGlobalId } from '../platform/graphql/node/global-id';
import { Node } from '../platform/graphql/node/node.type';
import { Refund } from './refund.type';
import { MinorUnitsScalar } from '../platform/graphql/scalars/minor-units.scalar';

/** The global id's tag of a payment: `pm`, then the provider's payment id. */
export const PAYMENT_TAG = 'pm';

@ObjectType({ simpleResolvers: true, implements: Node })
export class Payment implements Node {
  @Field(() => ID)
  get id(): string {
    return toGlobalId(PAYMENT_TAG, this.paymentId);
  }

  @Field(() => ID, {
    description: "The provider's payment id (what Payment.id was before ids were global; payment, refundPayment and refundUpdated still take it).",
  })
  paymentId!: string;

  // Both come from the payment's refund list, fetched by @FieldResolver methods of the payment resolver; optional
  // so a Payment can be returned knowing only its id.

  @Field(() => [Refund])
  refunds?: Refund[];

  @Field(() => MinorUnitsScalar, { description: 'Sum of the refunds that have not failed.' })
  refundedAmountInMinor?: number;
}
