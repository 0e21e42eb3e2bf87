import type { ClassType, ContainerType, NonEmptyArray } from 'type-graphql';
import {
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
import type { Features } from './features';
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

/** What the resolvers call: each feature's service, never the whole gateway. */
export interface ResolverDeps {
  accounts: Features['accounts'];
  identity: Pick<Features['identity'], 'service'>;
  payouts: Pick<Features['payouts'], 'service'>;
  refunds: Pick<Features['refunds'], 'service'>;
  dataTasks: Pick<Features['dataTasks'], 'service'>;
  beneficiaries: Pick<Features['beneficiaries'], 'service'>;
}

/**
 * The resolver instances the schema's fields call, each given the service it uses through its constructor
 * (type-graphql's container). A resolver that takes nothing is made here with `new`.
 */
export function resolverContainer(deps: ResolverDeps): ContainerType {
  const accountGraph = deps.accounts.graph;
  const identity = deps.identity.service;
  const payouts = deps.payouts.service;
  const refunds = deps.refunds.service;
  const dataTasks = deps.dataTasks.service;
  const beneficiaries = deps.beneficiaries.service;
  const instances: object[] = [
    ...accountResolvers(accountGraph),
    ...payoutResolvers(payouts),
    new UserResolver(identity),
    new BankConnectionResolver(identity),
    new DataTaskResolver(dataTasks, accountGraph),
    new RefundResolver(refunds),
    new PaymentResolver(refunds),
    new VerificationResolver(beneficiaries, accountGraph),
    new VerifiedBeneficiaryResolver(beneficiaries),
    // node(id:): each feature says how its own types are found again and who may read them.
    new NodeResolver(
      new NodeRegistry([
        ...accountNodeTypes(accountGraph),
        bankConnectionNodeType(identity),
        payoutNodeType(payouts),
        ...paymentNodeTypes(refunds),
        dataTaskNodeType(dataTasks),
        verifiedBeneficiaryNodeType(beneficiaries),
      ]),
    ),
  ];
  const byClass = new Map<unknown, object>(instances.map((instance) => [instance.constructor, instance]));
  for (const resolver of RESOLVERS) if (!byClass.has(resolver)) byClass.set(resolver, new resolver());
  return { get: (resolverClass) => byClass.get(resolverClass) };
}
