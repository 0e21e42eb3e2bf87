import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';
import { Money } from '../platform/graphql/types/money.type';
import { DateTimeScalar } from '../platform/graphql/scalars/date-time.scalar';
import { TransactionMeta } from './transaction-meta.type';

@ObjectType({ simpleResolvers: true })
export class Transaction {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true })
  normalisedProviderTransactionId?: string | null;

  @Field(() => String, { nullable: true })
  providerTransactionId?: string | null;

  @Field(() => DateTimeScalar)
  timestamp!: string;

  @Field(() => String)
  description!: string;

  @Field(() => Money, { description: 'Negative for money out on account transactions.' })
  amount!: Money;

  @Field(() => String, { description: 'Open set; value seen: DEBIT.' })
  type!: string;

  @Field(() => String, { description: 'Open set; value seen: PURCHASE.' })
  category!: string;

  @Field(() => [String])
  classification!: string[];

  @Field(() => String, { nullable: true })
  merchantName?: string | null;

  @Field(() => Money, { nullable: true })
  runningBalance?: Money | null;

  @Field(() => TransactionMeta, { nullable: true })
  meta?: TransactionMeta | null;
}
