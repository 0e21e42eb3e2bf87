import type { ClassType, ContainerType, NonEmptyArray } from 'type-graphql';
import { AccountResolver } from '../accounts/account.resolver';
import { BankConnectionResolver } from '../identity/bank-connection.resolver';
import { CardResolver } from '../accounts/card.resolver';
import { DataTaskResolver } from '../data-tasks/data-task.resolver';
import { PayoutResolver } from '../payouts/payout.resolver';
import { PaymentResolver, RefundResolver } from '../refunds';
import { SubscriptionResolver } from '../payouts/subscription.resolver';
import { VerificationResolver, VerifiedBeneficiaryResolver } from '../beneficiaries';
import { ViewerMoneyResolver } from '../payouts/viewer-money.resolver';
import { UserResolver } from '../identity/user.resolver';
import { ViewerResolver } from '../accounts/viewer.resolver';

export const RESOLVERS: NonEmptyArray<ClassType> = [
  ViewerResolver,
  UserResolver,
  AccountResolver,
  CardResolver,
  BankConnectionResolver,
  ViewerMoneyResolver,
  VerifiedBeneficiaryResolver,
  VerificationResolver,
  PayoutResolver,
  RefundResolver,
  PaymentResolver,
  DataTaskResolver,
  SubscriptionResolver,
];

/**
 * The resolver instances the schema's fields call, each given the services it uses through its constructor
 * (type-graphql's container): a resolver knows its feature's service, never the whole gateway. A resolver that
 * takes nothing is made here with `new`.
 */
export function resolverContainer(instances: readonly object[]): ContainerType {
  const byClass = new Map<unknown, object>(instances.map((instance) => [instance.constructor, instance]));
  for (const resolver of RESOLVERS) if (!byClass.has(resolver)) byClass.set(resolver, new resolver());
  return { get: (resolverClass) => byClass.get(resolverClass) };
}
