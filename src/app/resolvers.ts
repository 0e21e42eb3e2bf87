import type { ClassType, ContainerType, NonEmptyArray } from 'type-graphql';
import {
  AccountGraphService,
  accountNodeTypes,
  AccountResolver,
  accountResolvers,
  BankConnectionHoldingsResolver,
  CardResolver,
  ViewerIdResolver,
  ViewerResolver,
} from '../accounts';
import { BankConnectionResolver, bankConnectionNodeType, UserResolver } from '../identity';
import { dataTaskNodeType, DataTaskResolver } from '../data-tasks';
import { paymentNodeTypes, PaymentResolver, RefundResolver } from '../refunds';
import { payoutNodeType, payoutResolvers, PayoutResolver, ViewerMoneyResolver } from '../payouts';
import type { Services } from './services';
import { VerificationResolver, verifiedBeneficiaryNodeType, VerifiedBeneficiaryResolver } from '../beneficiaries';
import { NodeRegistry } from '../platform/graphql/node/node.registry';
import { NodeResolver } from '../platform/graphql/node/node.resolver';

export const RESOLVERS: NonEmptyArray<ClassType> = [
  ViewerResolver,
  ViewerIdResolver,
  UserResolver,
  AccountResolver,
  CardResolver,
  BankConnectionResolver,
  BankConnectionHoldingsResolver,
  ViewerMoneyResolver,
  VerifiedBeneficiaryResolver,
  VerificationResolver,
  PayoutResolver,
  RefundResolver,
  PaymentResolver,
  DataTaskResolver,
  NodeResolver,
];

/**
 * The resolver instances the schema's fields call, each given the services it uses through its constructor
 * (type-graphql's container): a resolver knows its feature's service, never the whole gateway. A resolver that
 * takes nothing is made here with `new`.
 */
export function resolverContainer(services: Services): ContainerType {
  const accountGraph = new AccountGraphService({
    data: services.data,
    responseCache: services.responseCache,
    connections: services.connections,
    userTokens: services.userTokens,
  });
  const instances: object[] = [
    ...accountResolvers(accountGraph),
    ...payoutResolvers(services.payoutService),
    new UserResolver(services.identity),
    new BankConnectionResolver(services.identity),
    new DataTaskResolver(services.live.dataTasks, accountGraph),
    new RefundResolver(services.refunds),
    new PaymentResolver(services.refunds),
    new VerificationResolver(services.beneficiaryService, accountGraph),
    new VerifiedBeneficiaryResolver(services.beneficiaryService),
    // node(id:): each feature says how its own types are found again and who may read them.
    new NodeResolver(
      new NodeRegistry([
        ...accountNodeTypes(accountGraph),
        bankConnectionNodeType(services.identity),
        payoutNodeType(services.payoutService),
        ...paymentNodeTypes(services.refunds),
        dataTaskNodeType(services.live.dataTasks),
        verifiedBeneficiaryNodeType(services.beneficiaryService),
      ]),
    ),
  ];
  const byClass = new Map<unknown, object>(instances.map((instance) => [instance.constructor, instance]));
  for (const resolver of RESOLVERS) if (!byClass.has(resolver)) byClass.set(resolver, new resolver());
  return { get: (resolverClass) => byClass.get(resolverClass) };
}
