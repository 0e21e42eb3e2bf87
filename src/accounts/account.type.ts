import 'reflect-metadata';
import { Field, ID, ObjectType } from 'type-graphql';
import { toGlobalId } from '../platform/graphql/node/global-id';
import { Node } from '../platform/graphql/node/node.type';
import { AccountBalance } from './account-balance.type';
import { AccountNumber } from './account-number.type';
import { Provider } from './provider.type';
import { DateTimeScalar } from '../platform/graphql/scalars/date-time.scalar';
import { TransactionConnection } from './transaction-connection.type';
import { Transaction } from './transaction.type';

/** The global id's tag of an account: `a`, then the provider's account id. */
export const ACCOUNT_TAG = 'a';

@ObjectType({ simpleResolvers: true, implements: Node })
export class Account implements Node {
  /**
   * Which of the user's bank connections shows it: its loaders serve the fields below. Not a GraphQL field; the
   * `connection` field is declared by the resolver alone, since BankConnection's own fields lead back here.
   */
  connectionId!: string;

  @Field(() => ID)
  get id(): string {
    return toGlobalId(ACCOUNT_TAG, this.accountId);
  }

  @Field(() => ID, {
    description: "The provider's account id. Arguments that took it before ids were global (viewer.account(id:), startDataTask's input.id) still take it.",
  })
  accountId!: string;

  @Field(() => String, { description: 'Open set; values seen: TRANSACTION, SAVINGS.' })
  type!: string;

  @Field(() => String)
  displayName!: string;

  @Field(() => String)
  currency!: string;

  @Field(() => AccountNumber)
  accountNumber!: AccountNumber;

  @Field(() => Provider)
  provider!: Provider;

  @Field(() => DateTimeScalar)
  updatedAt!: string;

  // The fields below come from their own provider calls, made by @FieldResolver methods of the account resolver.
  // They are declared here so the type and its nullability live in one place; they are optional because the
  // provider's account object does not carry them. `transactions` gets its arguments from the field resolver's
  // @Args() TransactionsArgs (type-graphql cannot put arguments on a property).

  @Field(() => AccountBalance, { nullable: true })
  balance?: AccountBalance | null;

  @Field(() => TransactionConnection)
  transactions?: TransactionConnection;

  @Field(() => [Transaction])
  pendingTransactions?: Transaction[];
}
