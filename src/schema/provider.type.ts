import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType()
export class Provider {
  @Field(() => ID)
  id!: string;
}
