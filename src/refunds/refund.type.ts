import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';
import { toGlobalId } from '../platform/graphql/node/global-id';
import { Node } from '../platform/graphql/node/node.type';
import { RefundStatus } from './refund-status.enum';
import { DateTimeScalar } from '../platform/graphql/scalars/date-time.scalar';
import { MinorUnitsScalar } from '../platform/graphql/scalars/minor-units.scalar';

/** The global id's tag of a refund: `rf`, then its payment's id and its own (the provider reads a refund under its payment). */
export const REFUND_TAG = 'rf';

@ObjectType({ simpleResolvers: true, implements: Node })
export class Refund implements Node {
  @Field(() => ID)
  get id(): string {
    return toGlobalId(REFUND_TAG, this.paymentId, this.refundId);
  }

  @Field(() => ID, { description: "The provider's refund id (what Refund.id was before ids were global; refundUpdated's refundId still takes it)." })
  refundId!: string;

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
