import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';
import { toGlobalId } from '../platform/graphql/node/global-id';
import { Node } from '../platform/graphql/node/node.type';
import { Money } from '../platform/graphql/types/money.type';
import { DateTimeScalar } from '../platform/graphql/scalars/date-time.scalar';
import { TransactionMeta } from './transaction-meta.type';
import type { TransactionList } from './transaction-list';

/** The global id's tag of a transaction: `t`, then the list that shows it, its account or card, and its own id. */
export const TRANSACTION_TAG = 't';

/** Where a transaction was read: its global id carries this, so node(id:) reads the same list again. */
export interface TransactionHolder {
  list: TransactionList;
  /** The provider's id of the account or card. */
  holderId: string;
}

@ObjectType({ simpleResolvers: true, implements: Node })
export class Transaction implements Node {
  /** Not a GraphQL field. */
  holder!: TransactionHolder;

  /** Made on first read: a connection's page shows each transaction twice, as an edge's node and in nodes. */
  #id: string | undefined;

  @Field(() => ID)
  get id(): string {
    return (this.#id ??= toGlobalId(TRANSACTION_TAG, this.holder.list, this.holder.holderId, this.transactionId));
  }

  @Field(() => ID, { description: "The provider's transaction id (what edges' cursors and Transaction.id were made of before ids were global)." })
  transactionId!: string;

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
