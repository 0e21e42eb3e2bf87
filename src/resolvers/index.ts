import type { ClassType, NonEmptyArray } from 'type-graphql';
import { AccountResolver } from './account.resolver';
import { BankConnectionResolver } from './bank-connection.resolver';
import { CardResolver } from './card.resolver';
import { DataTaskResolver } from './data-task.resolver';
import { PaymentResolver } from './payment.resolver';
import { PayoutResolver } from './payout.resolver';
import { RefundResolver } from './refund.resolver';
import { SubscriptionResolver } from './subscription.resolver';
import { VerificationResolver } from './verification.resolver';
import { ViewerMoneyResolver } from './viewer-money.resolver';
import { UserResolver } from './user.resolver';
import { ViewerResolver } from './viewer.resolver';

export const RESOLVERS: NonEmptyArray<ClassType> = [
  ViewerResolver,
  UserResolver,
  AccountResolver,
  CardResolver,
  BankConnectionResolver,
  ViewerMoneyResolver,
  VerificationResolver,
  PayoutResolver,
  RefundResolver,
  PaymentResolver,
  DataTaskResolver,
  SubscriptionResolver,
];
