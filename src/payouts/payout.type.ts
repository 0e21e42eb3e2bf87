import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';
import { toGlobalId } from '../platform/graphql/node/global-id';
import { Node } from '../platform/graphql/node/node.type';
import { DateTimeScalar } from '../platform/graphql/scalars/date-time.scalar';
import { MinorUnitsScalar } from '../platform/graphql/scalars/minor-units.scalar';
import { PayoutInitiator } from './payout-initiator.enum';
import { PayoutStatus } from './payout-status.enum';

/** The global id's tag of a payout: `po`, then its transaction id. */
export const PAYOUT_TAG = 'po';

@ObjectType({ simpleResolvers: true, implements: Node })
export class Payout implements Node {
  /** What normalised caches key a payout by: a payoutUpdated push selecting `id` updates the payout they hold. */
  @Field(() => ID)
  get id(): string {
    return toGlobalId(PAYOUT_TAG, this.transactionId);
  }

  @Field(() => ID)
  transactionId!: string;

  @Field(() => String, {
    description: 'Open set; settled marks completion.',
    deprecationReason: 'Use state, the same status as the PayoutStatus enum. status keeps its lower-case words for clients built against it.',
  })
  status!: string;

  @Field(() => PayoutStatus, { description: 'status as an enum, upper case like RefundStatus; UNKNOWN where status is a word the gateway does not know.' })
  state!: PayoutStatus;

  @Field(() => String)
  beneficiaryName!: string;

  @Field(() => String)
  beneficiaryIban!: string;

  @Field(() => String)
  beneficiaryReference!: string;

  @Field(() => MinorUnitsScalar)
  amountInMinor!: number;

  @Field(() => String)
  currency!: string;

  @Field(() => String)
  contextCode!: string;

  @Field(() => DateTimeScalar, { nullable: true })
  authorisedAt?: string | null;

  @Field(() => DateTimeScalar, { nullable: true })
  submittedAt?: string | null;

  @Field(() => DateTimeScalar, { nullable: true })
  settledAt?: string | null;

  @Field(() => DateTimeScalar, { nullable: true })
  rejectedAt?: string | null;

  @Field(() => DateTimeScalar, { nullable: true })
  failedAt?: string | null;

  @Field(() => PayoutInitiator, {
    nullable: true,
    description: 'Who asked for the payout; null for a payout made at the provider without this gateway.',
  })
  initiatedBy?: PayoutInitiator | null;

  @Field(() => String, { nullable: true, description: 'The name the agent (MCP client) gave when initiatedBy is AGENT; null otherwise.' })
  agentName?: string | null;
}
