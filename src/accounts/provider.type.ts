import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ simpleResolvers: true })
export class Provider {
  @Field(() => ID)
  id!: string;
}
