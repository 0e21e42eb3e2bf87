import type { GraphQLSchema } from 'graphql';
import type { ClassType } from 'type-graphql';
import { AccountBalance } from '../accounts';
import { AccountNumber } from '../accounts';
import { AccountReport } from '../beneficiaries';
import { Account } from '../accounts';
import { CardBalance } from '../accounts';
import { Card } from '../accounts';
import { Provider } from '../accounts';
import { TransactionConnection } from '../accounts';
import { TransactionEdge } from '../accounts';
import { TransactionMeta } from '../accounts';
import { Transaction } from '../accounts';
import { Viewer } from '../accounts';
import { AccountHolder } from '../beneficiaries';
import { VerificationResult } from '../beneficiaries';
import { VerifiedBeneficiary } from '../beneficiaries';
import { DataTask } from '../data-tasks';
import { StartDataTaskInput } from '../data-tasks';
import { CreatePayoutInput } from '../payouts';
import { Payout } from '../payouts';
import { Payment } from '../refunds';
import { RefundPaymentInput } from '../refunds';
import { Refund } from '../refunds';
import { buildGatewaySchema, type GatewaySchemaOptions } from '../platform/graphql/build-schema';
import { RESOLVERS } from './resolvers';

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
  TransactionMeta,
  Transaction,
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

/** The gateway's schema: its resolvers and every contract type (what `npm run schema` prints, what the server runs). */
export function buildAppSchema<TContext extends object = object>(options: Partial<GatewaySchemaOptions<TContext>> = {}): Promise<GraphQLSchema> {
  return buildGatewaySchema<TContext>({ resolvers: RESOLVERS, ...options, types: CONTRACT_CLASSES });
}
