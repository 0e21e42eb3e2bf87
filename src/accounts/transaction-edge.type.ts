import 'reflect-metadata';
import { Field, ObjectType } from 'type-graphql';
import { Transaction } from './transaction.type';

@ObjectType({ simpleResolvers: true })
export class TransactionEdge {
  @Field(() => String)
  cursor!: string;

  @Field(() => Transaction)
  node!: Transaction;
}
