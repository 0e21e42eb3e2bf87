import 'reflect-metadata';
import { Field, Float, ObjectType } from 'type-graphql';

@ObjectType({ simpleResolvers: true })
export class AccountHolder {
  @Field(() => String)
  name!: string;

  @Field(() => Boolean)
  verified!: boolean;

  @Field(() => Float)
  matchScore!: number;
}
