import 'reflect-metadata';
import { Field, ObjectType } from 'type-graphql';
import { AccountHolder } from './account-holder.type';

@ObjectType({ simpleResolvers: true })
export class AccountReport {
  @Field(() => Boolean)
  verifiable!: boolean;

  @Field(() => String, { nullable: true })
  currency?: string | null;

  @Field(() => String, { nullable: true })
  providerId?: string | null;

  @Field(() => String, { nullable: true })
  accountType?: string | null;

  @Field(() => [AccountHolder])
  accountHolders!: AccountHolder[];

  @Field(() => String, { nullable: true })
  displayName?: string | null;

  @Field(() => String, { nullable: true })
  iban?: string | null;

  @Field(() => String, { nullable: true })
  swiftBic?: string | null;

  @Field(() => String, { nullable: true })
  accountNumber?: string | null;

  @Field(() => String, { nullable: true })
  sortCode?: string | null;
}
