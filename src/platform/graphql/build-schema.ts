import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema, type AuthChecker, type ClassType, type ContainerGetter, type ContainerType, type NonEmptyArray, type PubSub } from 'type-graphql';
import { AccountBalance } from '../../accounts/account-balance.type';
import { AccountHolder } from '../../beneficiaries/account-holder.type';
import { AccountNumber } from '../../accounts/account-number.type';
import { AccountReport } from '../../beneficiaries/account-report.type';
import { Account } from '../../accounts/account.type';
import { CardBalance } from '../../accounts/card-balance.type';
import { Card } from '../../accounts/card.type';
import { CreatePayoutInput } from '../../payouts/create-payout.input';
import { DataTask } from '../../data-tasks/data-task.type';
import { Money } from './types/money.type';
import { PageInfo } from './types/page-info.type';
import { Payment } from '../../refunds/payment.type';
import { Payout } from '../../payouts/payout.type';
import { Provider } from '../../accounts/provider.type';
import { RefundPaymentInput } from '../../refunds/refund-payment.input';
import { Refund } from '../../refunds/refund.type';
import { DateTimeScalar } from './scalars/date-time.scalar';
import { StartDataTaskInput } from '../../data-tasks/start-data-task.input';
import { TransactionConnection } from '../../accounts/transaction-connection.type';
import { TransactionEdge } from '../../accounts/transaction-edge.type';
import { TransactionMeta } from '../../accounts/transaction-meta.type';
import { Transaction } from '../../accounts/transaction.type';
import { VerificationResult } from '../../beneficiaries/verification-result.type';
import { VerifiedBeneficiary } from '../../beneficiaries/verified-beneficiary.type';
import { Viewer } from '../../accounts/viewer.type';

// Listed as orphaned types so every contract type is in the schema whichever resolvers exist: a build with only
// some resolvers still emits the whole type layer, and a missing root field shows up as just that.
const CONTRACT_CLASSES: ClassType[] = [
  Viewer,
  Provider,
  AccountNumber,
  Account,
  AccountBalance,
  Card,
  CardBalance,
  Money,
  TransactionMeta,
  Transaction,
  PageInfo,
  TransactionEdge,
  TransactionConnection,
  AccountHolder,
  AccountReport,
  VerificationResult,
  VerifiedBeneficiary,
  CreatePayoutInput,
  Payout,
  RefundPaymentInput,
  Refund,
  Payment,
  StartDataTaskInput,
  DataTask,
];

/**
 * For building the schema only (`npm run schema`, schema tests): type-graphql insists on a PubSub once any
 * @Subscription exists, even though this gateway's subscriptions bring their own `subscribe` functions. A server
 * passes its event bus (createGateway does); this one refuses to carry events, so forgetting that shows at once.
 */
const SCHEMA_ONLY_PUBSUB: PubSub = {
  publish() {
    throw new Error('this schema was built without a pubSub; pass the gateway event bus to buildGatewaySchema');
  },
  subscribe() {
    throw new Error('this schema was built without a pubSub; pass the gateway event bus to buildGatewaySchema');
  },
};

export interface GatewaySchemaOptions<TContext extends object = object> {
  resolvers: NonEmptyArray<ClassType>;
  /** The event bus a server's subscriptions use; omitted when the schema is only printed. */
  pubSub?: PubSub;
  /** Required as soon as a resolver uses @Authorized. */
  authChecker?: AuthChecker<TContext>;
  container?: ContainerType | ContainerGetter<TContext>;
}

/*
 * Every object type is declared with `simpleResolvers: true`: its plain fields then have no resolver and skip
 * type-graphql's middleware pipeline (the gateway uses no middleware and no @Authorized), which costs measurably on
 * lists of hundreds of transactions and on every account and card. Fields with a @FieldResolver keep theirs.
 */
export async function buildGatewaySchema<TContext extends object = object>(options: GatewaySchemaOptions<TContext>): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: options.resolvers,
    orphanedTypes: CONTRACT_CLASSES,
    // A property typed as a JS Date would otherwise become type-graphql's own DateTimeISO scalar, a second
    // date-time type next to the contract's.
    scalarsMap: [{ type: Date, scalar: DateTimeScalar }],
    // Inputs are checked by the scalars and by resolvers with errors that carry our codes; class-validator is not used.
    validate: false,
    // The committed schema.graphql is written by printGatewaySchema, so its format is ours and not type-graphql's.
    emitSchemaFile: false,
    pubSub: options.pubSub ?? SCHEMA_ONLY_PUBSUB,
    ...(options.authChecker === undefined ? {} : { authChecker: options.authChecker }),
    ...(options.container === undefined ? {} : { container: options.container }),
  });
}

/**
 * The SDL of the schema with types, fields, arguments and enum values in alphabetical order, so the committed
 * file changes only when the schema does, not when declarations or resolver lists are reordered.
 */
export function printGatewaySchema(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
