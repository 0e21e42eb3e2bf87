import type { NonEmptyArray } from 'type-graphql';
import { AccountResolver } from './account.resolver';
import { CardResolver } from './card.resolver';
import { PaymentResolver } from './payment.resolver';
import { PayoutResolver } from './payout.resolver';
import { RefundResolver } from './refund.resolver';
import { VerificationResolver } from './verification.resolver';
import { ViewerMoneyResolver } from './viewer-money.resolver';
import { ViewerResolver } from './viewer.resolver';

export const RESOLVERS: NonEmptyArray<Function> = [
  ViewerResolver,
  AccountResolver,
  CardResolver,
  ViewerMoneyResolver,
  VerificationResolver,
  PayoutResolver,
  RefundResolver,
  PaymentResolver,
];
