import 'reflect-metadata';
import { Field, Float, ObjectType } from 'type-graphql';
import { AccountReport } from './account-report.type';

@ObjectType({ simpleResolvers: true })
export class VerificationResult {
  @Field(() => Boolean)
  verified!: boolean;

  @Field(() => String)
  accountHolderName!: string;

  @Field(() => Float)
  matchScore!: number;

  @Field(() => [AccountReport])
  report!: AccountReport[];
}
