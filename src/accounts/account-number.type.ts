import 'reflect-metadata';
import { Field, ObjectType } from 'type-graphql';

@ObjectType({ simpleResolvers: true })
export class AccountNumber {
  @Field(() => String, { nullable: true })
  iban?: string | null;

  @Field(() => String, { nullable: true })
  number?: string | null;

  @Field(() => String, { nullable: true })
  sortCode?: string | null;

  @Field(() => String, { nullable: true })
  swiftBic?: string | null;
}
