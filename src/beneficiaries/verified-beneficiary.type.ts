import 'reflect-metadata';
import { Field, ObjectType } from 'type-graphql';
import { DateTimeScalar } from '../platform/graphql/scalars/date-time.scalar';

@ObjectType({ simpleResolvers: true })
export class VerifiedBeneficiary {
  @Field(() => String)
  iban!: string;

  @Field(() => String)
  name!: string;

  @Field(() => DateTimeScalar)
  verifiedAt!: string;
}
