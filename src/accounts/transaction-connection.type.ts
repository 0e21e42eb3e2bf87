import 'reflect-metadata';
import { Field, Int, ObjectType } from 'type-graphql';
import { PageInfo } from '../platform/graphql/types/page-info.type';
import { TransactionEdge } from './transaction-edge.type';
import { Transaction } from './transaction.type';

@ObjectType({ simpleResolvers: true })
export class TransactionConnection {
  @Field(() => [TransactionEdge])
  edges!: TransactionEdge[];

  @Field(() => [Transaction])
  nodes!: Transaction[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;

  @Field(() => Int)
  totalCount!: number;
}
