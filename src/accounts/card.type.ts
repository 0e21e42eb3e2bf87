import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';
import { toGlobalId } from '../platform/graphql/node/global-id';
import { Node } from '../platform/graphql/node/node.type';
import { CardBalance } from './card-balance.type';
import { Provider } from './provider.type';
import { DateTimeScalar } from '../platform/graphql/scalars/date-time.scalar';
import { YearMonthScalar } from '../platform/graphql/scalars/year-month.scalar';
import { TransactionConnection } from './transaction-connection.type';
import { Transaction } from './transaction.type';

/** The global id's tag of a card: `c`, then the provider's card id. */
export const CARD_TAG = 'c';

@ObjectType({ simpleResolvers: true, implements: Node })
export class Card implements Node {
  /**
   * Which of the user's bank connections shows it: its loaders serve the fields below. Not a GraphQL field; the
   * `connection` field is declared by the resolver alone, since BankConnection's own fields lead back here.
   */
  connectionId!: string;

  @Field(() => ID)
  get id(): string {
    return toGlobalId(CARD_TAG, this.cardId);
  }

  @Field(() => ID, {
    description: "The provider's card id. Arguments that took it before ids were global (viewer.card(id:), startDataTask's input.id) still take it.",
  })
  cardId!: string;

  @Field(() => String, { description: 'Open set; value seen: VISA.' })
  network!: string;

  @Field(() => String, { description: 'Open set; value seen: CREDIT.' })
  type!: string;

  @Field(() => String)
  currency!: string;

  @Field(() => String)
  displayName!: string;

  @Field(() => String)
  partialCardNumber!: string;

  @Field(() => String)
  nameOnCard!: string;

  @Field(() => YearMonthScalar, { nullable: true })
  validFrom?: string | null;

  @Field(() => YearMonthScalar, { nullable: true })
  validTo?: string | null;

  @Field(() => DateTimeScalar)
  updatedAt!: string;

  @Field(() => Provider)
  provider!: Provider;

  // Resolved by @FieldResolver methods of the card resolver from their own provider calls; see Account for why
  // they are declared here and optional, and where `transactions` gets its arguments.

  @Field(() => CardBalance, { nullable: true })
  balance?: CardBalance | null;

  @Field(() => TransactionConnection)
  transactions?: TransactionConnection;

  @Field(() => [Transaction])
  pendingTransactions?: Transaction[];
}
