import type { GraphQLSchema } from 'graphql';
import type { ClassType } from 'type-graphql';
import { AccountBalance } from '../accounts/account-balance.type';
import { AccountNumber } from '../accounts/account-number.type';
import { AccountReport } from '../beneficiaries/account-report.type';
import { Account } from '../accounts/account.type';
import { CardBalance } from '../accounts/card-balance.type';
import { Card } from '../accounts/card.type';
import { Provider } from '../accounts/provider.type';
import { TransactionConnection } from '../accounts/transaction-connection.type';
import { TransactionEdge } from '../accounts/transaction-edge.type';
import { TransactionMeta } from '../accounts/transaction-meta.type';
import { Transaction } from '../accounts/transaction.type';
import { Viewer } from '../accounts/viewer.type';
import { AccountHolder } from '../beneficiaries/account-holder.type';
import { VerificationResult } from '../beneficiaries/verification-result.type';
import { VerifiedBeneficiary } from '../beneficiaries/verified-beneficiary.type';
import { DataTask } from '../data-tasks/data-task.type';
import { StartDataTaskInput } from '../data-tasks/start-data-task.input';
import { CreatePayoutInput } from '../payouts/create-payout.input';
import { Payout } from '../payouts/payout.type';
import { Payment } from '../refunds/payment.type';
import { RefundPaymentInput } from '../refunds/refund-payment.input';
import { Refund } from '../refunds/refund.type';
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
