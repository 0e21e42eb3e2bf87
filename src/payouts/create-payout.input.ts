import 'reflect-metadata';
import { Field, ID, InputType } from 'type-graphql';
import { MinorUnitsScalar } from '../platform/graphql/scalars/minor-units.scalar';

@InputType()
export class CreatePayoutInput {
  @Field(() => ID, { nullable: true, description: 'A UUID chosen by the caller; one is generated when omitted.' })
  transactionId?: string | null;

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
}
