import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';
import { DateTimeScalar } from '../platform/graphql/scalars/date-time.scalar';
import { MinorUnitsScalar } from '../platform/graphql/scalars/minor-units.scalar';

@ObjectType({ simpleResolvers: true })
export class Payout {
  @Field(() => ID)
  transactionId!: string;

  @Field(() => String, { description: 'Open set; settled marks completion.' })
  status!: string;

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
}
