import { readFileSync } from 'node:fs';
import path from 'node:path';
import { graphql, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { Args, FieldResolver, Mutation, Query, Resolver, Root, Subscription, type PubSub } from 'type-graphql';
import { VerifiedBeneficiary } from '../../src/beneficiaries/verified-beneficiary.type';
import { AccountBalance } from '../../src/accounts/account-balance.type';
import { Account } from '../../src/accounts/account.type';
import { printGatewaySchema } from '../../src/platform/graphql/build-schema';
import { buildAppSchema } from '../../src/app/schema';
import { CardBalance } from '../../src/accounts/card-balance.type';
import { Card } from '../../src/accounts/card.type';
import { findContractViolations, findDescriptionDifferences } from '../helpers/schema-contract';
import { CreatePayoutArgs } from '../../src/payouts/create-payout.args';
import { DataResource } from '../../src/data-tasks/data-resource.enum';
import { DataTaskStatus } from '../../src/data-tasks/data-task-status.enum';
import { DataTask } from '../../src/data-tasks/data-task.type';
import { IdArgs } from '../../src/platform/graphql/types/id.args';
import { Payment } from '../../src/refunds/payment.type';
import { PayoutArgs } from '../../src/payouts/payout.args';
import { Payout } from '../../src/payouts/payout.type';
import { RefundPaymentArgs } from '../../src/refunds/refund-payment.args';
import { RefundStatus } from '../../src/refunds/refund-status.enum';
import { RefundUpdatedArgs } from '../../src/refunds/refund-updated.args';
import { Refund } from '../../src/refunds/refund.type';
import { StartDataTaskArgs } from '../../src/data-tasks/start-data-task.args';
import { TransactionConnection } from '../../src/accounts/transaction-connection.type';
import { Transaction } from '../../src/accounts/transaction.type';
import { TransactionsArgs } from '../../src/accounts/transactions.args';
import { VerificationResult } from '../../src/beneficiaries/verification-result.type';
import { VerifyAccountHolderArgs } from '../../src/beneficiaries/verify-account-holder.args';
import { Viewer } from '../../src/accounts/viewer.type';

// The public contract, committed in the repository (docs/development.md says how it is refreshed).
const CONTRACT_PATH = path.resolve(__dirname, '../../contract/schema.graphql');
const CONTRACT = readFileSync(CONTRACT_PATH, 'utf8');

/*
 * Test-only data and resolvers: the root fields of the contract, answered from constants, plus the field
 * resolvers that give Account.transactions, Card.transactions, Viewer.account and Viewer.card their arguments,
 * the way the real resolvers will.
 */

const transaction: Transaction = Object.assign(new Transaction(), {
  holder: { list: 'a' as const, holderId: 'acc-1' },
  transactionId: 'tx-1',
  normalisedProviderTransactionId: null,
  providerTransactionId: 'ptx-1',
  timestamp: '2026-01-30T12:34:56.1234567+01:00',
  description: 'COFFEE',
  amount: { amount: -2.99, currency: 'GBP' },
  type: 'DEBIT',
  category: 'PURCHASE',
  classification: ['Food', 'Coffee'],
  merchantName: 'Bean',
  runningBalance: { amount: 1234.5, currency: 'GBP' },
  meta: { bankTransactionId: 'b-1', providerTransactionCategory: 'DEB', raw: { bank_transaction_id: 'b-1', n: [1, 2] } },
});

const account: Account = Object.assign(new Account(), {
  connectionId: 'conn-1',
  accountId: 'acc-1',
  type: 'TRANSACTION',
  displayName: 'Current',
  currency: 'GBP',
  accountNumber: { iban: 'GB35CLRB04066800003435', number: '00003435', sortCode: '04-06-68', swiftBic: 'CLRBGB22' },
  provider: { id: 'ob-sandbox' },
  updatedAt: '2026-01-31T09:00:00Z',
});

const accountBalance: AccountBalance = {
  currency: 'GBP',
  available: 10,
  current: '-0.01',
  overdraft: null,
  updatedAt: '2026-01-31T09:00:00.000000Z',
};

const card: Card = Object.assign(new Card(), {
  connectionId: 'conn-1',
  cardId: 'card-1',
  network: 'VISA',
  type: 'CREDIT',
  currency: 'GBP',
  displayName: 'Travel card',
  partialCardNumber: '1234',
  nameOnCard: 'A N Other',
  validFrom: '2024-01',
  validTo: null,
  updatedAt: '2026-01-31T09:00:00',
  provider: { id: 'ob-sandbox' },
});

const cardBalance: CardBalance = {
  currency: 'GBP',
  available: 0.1,
  current: 1e21,
  creditLimit: 3000,
  lastStatementBalance: null,
  lastStatementDate: '2026-01-15',
  paymentDue: 25.5,
  paymentDueDate: '2026-02-10',
  updatedAt: '2026-01-31T09:00:00Z',
};

const payout: Payout = Object.assign(new Payout(), {
  transactionId: 'c5b4a7b8-8d1e-4d7e-9a4a-1d7f2f0a9b10',
  status: 'authorised',
  beneficiaryName: 'A N Other',
  beneficiaryIban: 'GB35CLRB04066800003435',
  beneficiaryReference: 'Rent',
  amountInMinor: Number.MAX_SAFE_INTEGER,
  currency: 'GBP',
  contextCode: 'withdrawal',
  authorisedAt: '2026-01-31T09:00:00.1Z',
});

const refund: Refund = Object.assign(new Refund(), {
  refundId: 'ref-1',
  paymentId: 'pay-1',
  amountInMinor: 250,
  currency: 'GBP',
  status: RefundStatus.PENDING,
  reference: 'Sorry',
  createdAt: '2026-01-31T09:00:00Z',
});

const dataTask: DataTask = Object.assign(new DataTask(), {
  taskId: 'task-1',
  resource: DataResource.CARD_BALANCE,
  status: DataTaskStatus.SUCCEEDED,
  createdAt: '2026-01-31T09:00:00Z',
  completedAt: '2026-01-31T09:00:01Z',
  cardBalance,
});

const seenArgs: Record<string, unknown> = {};

function connection(transactions: Transaction[]): TransactionConnection {
  return {
    edges: transactions.map((node) => ({ cursor: `c:${node.transactionId}`, node })),
    nodes: transactions,
    pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: 'c:tx-1', endCursor: 'c:tx-1' },
    totalCount: transactions.length,
  };
}

@Resolver()
class TestRootResolver {
  @Query(() => Viewer)
  viewer(): Viewer {
    return new Viewer();
  }

  @Query(() => Payment, { nullable: true })
  payment(@Args() { id }: IdArgs): Payment | null {
    return id === 'pay-1' ? Object.assign(new Payment(), { paymentId: id, refunds: [refund], refundedAmountInMinor: 250 }) : null;
  }

  @Query(() => Payout, { nullable: true })
  payout(@Args() { transactionId }: PayoutArgs): Payout | null {
    return transactionId === payout.transactionId ? payout : null;
  }

  @Query(() => DataTask, { nullable: true })
  dataTask(@Args() { id }: IdArgs): DataTask | null {
    return id === dataTask.taskId ? dataTask : null;
  }

  @Mutation(() => VerificationResult)
  verifyAccountHolder(@Args() { name }: VerifyAccountHolderArgs): VerificationResult {
    return {
      verified: true,
      accountHolderName: name,
      matchScore: 0.97,
      report: [{ verifiable: true, accountHolders: [{ name, verified: true, matchScore: 0.97 }], iban: account.accountNumber.iban }],
    };
  }

  @Mutation(() => Payout)
  createPayout(@Args() { input }: CreatePayoutArgs): Payout {
    seenArgs.createPayout = input;
    return Object.assign(new Payout(), { ...payout, ...input, transactionId: input.transactionId ?? payout.transactionId });
  }

  @Mutation(() => Refund)
  refundPayment(@Args() { input }: RefundPaymentArgs): Refund {
    seenArgs.refundPayment = input;
    return Object.assign(new Refund(), { ...refund, amountInMinor: input.amountInMinor ?? refund.amountInMinor });
  }

  @Mutation(() => DataTask)
  startDataTask(@Args() { input }: StartDataTaskArgs): DataTask {
    seenArgs.startDataTask = input;
    return Object.assign(new DataTask(), { ...dataTask, resource: input.resource, status: DataTaskStatus.QUEUED, completedAt: null, cardBalance: null });
  }

  @Subscription(() => DataTask, { subscribe: () => emptyStream() })
  dataTaskUpdated(@Args() _args: IdArgs, @Root() task: DataTask): DataTask {
    return task;
  }

  @Subscription(() => Refund, { subscribe: () => emptyStream() })
  refundUpdated(@Args() _args: RefundUpdatedArgs, @Root() update: Refund): Refund {
    return update;
  }

  @Subscription(() => Payout, { subscribe: () => emptyStream() })
  payoutUpdated(@Args() _args: PayoutArgs, @Root() update: Payout): Payout {
    return update;
  }
}

@Resolver(() => Viewer)
class TestViewerResolver {
  @FieldResolver(() => [Account])
  accounts(): Account[] {
    return [account];
  }

  @FieldResolver(() => Account, { nullable: true })
  account(@Args() { id }: IdArgs): Account | null {
    return id === account.accountId ? account : null;
  }

  @FieldResolver(() => [Card])
  cards(): Card[] {
    return [card];
  }

  @FieldResolver(() => Card, { nullable: true })
  card(@Args() { id }: IdArgs): Card | null {
    return id === card.cardId ? card : null;
  }

  @FieldResolver(() => [VerifiedBeneficiary], { description: 'IBANs this user has verified; payouts may go to these without a new verification.' })
  verifiedBeneficiaries(): VerifiedBeneficiary[] {
    return [Object.assign(new VerifiedBeneficiary(), { key: 'k', iban: 'GB35CLRB04066800003435', name: 'A N Other', verifiedAt: '2026-01-31T00:00:00.000Z' })];
  }

  @FieldResolver(() => [Payout], { description: 'Payouts this user created, newest first.' })
  payouts(): Payout[] {
    return [payout];
  }
}

@Resolver(() => Account)
class TestAccountResolver {
  @FieldResolver(() => AccountBalance, { nullable: true })
  balance(): AccountBalance {
    return accountBalance;
  }

  @FieldResolver(() => TransactionConnection)
  transactions(@Root() root: Account, @Args() args: TransactionsArgs): TransactionConnection {
    seenArgs.accountTransactions = { account: root.accountId, ...args };
    return connection([transaction]);
  }

  @FieldResolver(() => [Transaction])
  pendingTransactions(): Transaction[] {
    return [];
  }
}

@Resolver(() => Card)
class TestCardResolver {
  @FieldResolver(() => CardBalance, { nullable: true })
  balance(): CardBalance {
    return cardBalance;
  }

  @FieldResolver(() => TransactionConnection)
  transactions(@Args() args: TransactionsArgs): TransactionConnection {
    seenArgs.cardTransactions = { ...args };
    return connection([
      Object.assign(new Transaction(), { ...transaction, transactionId: 'tx-card', amount: { amount: 12, currency: 'GBP' }, runningBalance: null, meta: null }),
    ]);
  }

  @FieldResolver(() => [Transaction])
  pendingTransactions(): Transaction[] {
    return [transaction];
  }
}

@Resolver()
class TestMinimalResolver {
  @Query(() => Boolean)
  ping(): boolean {
    return true;
  }
}

async function* emptyStream(): AsyncGenerator<never> {}

const pubSub: PubSub = { publish: () => undefined, subscribe: () => emptyStream() };

let schema: GraphQLSchema;

beforeAll(async () => {
  schema = await buildAppSchema({
    resolvers: [TestRootResolver, TestViewerResolver, TestAccountResolver, TestCardResolver],
    pubSub,
  });
});

beforeEach(() => {
  for (const key of Object.keys(seenArgs)) delete seenArgs[key];
});

async function run(source: string, variableValues?: Record<string, unknown>): Promise<ExecutionResult> {
  return graphql({ schema, source, variableValues });
}

describe('the schema built from the type classes', () => {
  it('has every type, field, argument, default and enum value of the contract', () => {
    expect(findContractViolations(CONTRACT, printGatewaySchema(schema))).toEqual([]);
  });

  it('carries the descriptions of the contract on the types (root fields belong to the resolvers)', () => {
    const differences = findDescriptionDifferences(CONTRACT, printGatewaySchema(schema));
    expect(differences.filter((line) => !/^(Query|Mutation|Subscription)\./.test(line))).toEqual([]);
  });

  it('keeps every contract type in the schema when no root field reaches it', async () => {
    const minimal = await buildAppSchema({ resolvers: [TestMinimalResolver] });
    const printed = printGatewaySchema(minimal);
    const rootless = CONTRACT.replace(/^type (Query|Mutation|Subscription) \{[^}]*\}\n*/gm, '');
    expect(rootless).not.toMatch(/^type (Query|Mutation|Subscription)/m);
    expect(findContractViolations(rootless, printed)).toEqual([]);
    expect(printed).not.toMatch(/DateTimeISO/);
  });

  it('prints the same SDL whatever order the resolvers come in', async () => {
    const reordered = await buildAppSchema({
      resolvers: [TestCardResolver, TestAccountResolver, TestViewerResolver, TestRootResolver],
      pubSub,
    });
    const printed = printGatewaySchema(schema);
    expect(printGatewaySchema(reordered)).toBe(printed);
    expect(printed).toMatch(/[^\n]\n$/);
    expect(printed.indexOf('type Account implements Node {')).toBeLessThan(printed.indexOf('type Viewer implements Node {'));
    expect(printed.indexOf('type Account implements Node {')).toBeGreaterThanOrEqual(0);
  });
});

describe('the classes compose into a working graph', () => {
  it('resolves a nested viewer query, keeping decimals and timestamps exact', async () => {
    const result = await run(`{
      viewer {
        accounts {
          accountId type displayName currency updatedAt
          accountNumber { iban number sortCode swiftBic }
          provider { id }
          balance { currency available current overdraft updatedAt }
          transactions(first: 2, from: "2026-01-01") {
            totalCount
            pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
            edges { cursor node { transactionId timestamp amount { amount currency } runningBalance { amount } classification meta { bankTransactionId raw } } }
            nodes { transactionId normalisedProviderTransactionId merchantName }
          }
          pendingTransactions { transactionId }
        }
        account(id: "acc-1") { accountId }
        missing: account(id: "nope") { accountId }
        cards {
          cardId network validFrom validTo updatedAt
          balance { available current creditLimit lastStatementBalance lastStatementDate paymentDue paymentDueDate }
          transactions { nodes { transactionId amount { amount } runningBalance { amount } meta { raw } } }
          pendingTransactions { timestamp }
        }
        card(id: "card-1") { displayName }
        verifiedBeneficiaries { iban verifiedAt }
        payouts { amountInMinor authorisedAt submittedAt }
      }
    }`);
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      viewer: {
        accounts: [
          {
            accountId: 'acc-1',
            type: 'TRANSACTION',
            displayName: 'Current',
            currency: 'GBP',
            updatedAt: '2026-01-31T09:00:00Z',
            accountNumber: { iban: 'GB35CLRB04066800003435', number: '00003435', sortCode: '04-06-68', swiftBic: 'CLRBGB22' },
            provider: { id: 'ob-sandbox' },
            balance: { currency: 'GBP', available: '10', current: '-0.01', overdraft: null, updatedAt: '2026-01-31T09:00:00.000000Z' },
            transactions: {
              totalCount: 1,
              pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: 'c:tx-1', endCursor: 'c:tx-1' },
              edges: [
                {
                  cursor: 'c:tx-1',
                  node: {
                    transactionId: 'tx-1',
                    timestamp: '2026-01-30T12:34:56.1234567+01:00',
                    amount: { amount: '-2.99', currency: 'GBP' },
                    runningBalance: { amount: '1234.5' },
                    classification: ['Food', 'Coffee'],
                    meta: { bankTransactionId: 'b-1', raw: { bank_transaction_id: 'b-1', n: [1, 2] } },
                  },
                },
              ],
              nodes: [{ transactionId: 'tx-1', normalisedProviderTransactionId: null, merchantName: 'Bean' }],
            },
            pendingTransactions: [],
          },
        ],
        account: { accountId: 'acc-1' },
        missing: null,
        cards: [
          {
            cardId: 'card-1',
            network: 'VISA',
            validFrom: '2024-01',
            validTo: null,
            updatedAt: '2026-01-31T09:00:00',
            balance: {
              available: '0.1',
              current: '1000000000000000000000',
              creditLimit: '3000',
              lastStatementBalance: null,
              lastStatementDate: '2026-01-15',
              paymentDue: '25.5',
              paymentDueDate: '2026-02-10',
            },
            transactions: { nodes: [{ transactionId: 'tx-card', amount: { amount: '12' }, runningBalance: null, meta: null }] },
            pendingTransactions: [{ timestamp: '2026-01-30T12:34:56.1234567+01:00' }],
          },
        ],
        card: { displayName: 'Travel card' },
        verifiedBeneficiaries: [{ iban: 'GB35CLRB04066800003435', verifiedAt: '2026-01-31T00:00:00.000Z' }],
        payouts: [{ amountInMinor: 9007199254740991, authorisedAt: '2026-01-31T09:00:00.1Z', submittedAt: null }],
      },
    });
  });

  it('hands field resolvers their arguments, with the default for first', async () => {
    await run('{ viewer { accounts { transactions(from: "2026-01-01", after: "c:0") { totalCount } } cards { transactions { totalCount } } } }');
    expect(seenArgs.accountTransactions).toEqual({ account: 'acc-1', from: '2026-01-01', after: 'c:0', first: 50 });
    expect(seenArgs.cardTransactions).toEqual({ first: 50 });
  });

  it('resolves payments, payouts and data tasks with their enums and scalars', async () => {
    const result = await run(`{
      payment(id: "pay-1") { paymentId refundedAmountInMinor refunds { refundId paymentId amountInMinor status createdAt authorizedAt failureReason } }
      payout(transactionId: "c5b4a7b8-8d1e-4d7e-9a4a-1d7f2f0a9b10") { status amountInMinor }
      dataTask(id: "task-1") { taskId resource status createdAt completedAt accounts { id } cardBalance { current } }
    }`);
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      payment: {
        paymentId: 'pay-1',
        refundedAmountInMinor: 250,
        refunds: [
          {
            refundId: 'ref-1',
            paymentId: 'pay-1',
            amountInMinor: 250,
            status: 'PENDING',
            createdAt: '2026-01-31T09:00:00Z',
            authorizedAt: null,
            failureReason: null,
          },
        ],
      },
      payout: { status: 'authorised', amountInMinor: 9007199254740991 },
      dataTask: {
        taskId: 'task-1',
        resource: 'CARD_BALANCE',
        status: 'SUCCEEDED',
        createdAt: '2026-01-31T09:00:00Z',
        completedAt: '2026-01-31T09:00:01Z',
        accounts: null,
        cardBalance: { current: '1000000000000000000000' },
      },
    });
  });

  it('parses inputs: MinorUnits beyond 32 bits, enums, dates, omitted optional fields', async () => {
    const result = await run(
      `mutation($payout: CreatePayoutInput!, $task: StartDataTaskInput!) {
        verifyAccountHolder(name: "A N Other") { verified accountHolderName matchScore report { verifiable iban accountHolders { name matchScore } } }
        createPayout(input: $payout) { transactionId amountInMinor }
        refundPayment(input: { paymentId: "pay-1", amountInMinor: 4294967296, reference: "Sorry" }) { amountInMinor status }
        startDataTask(input: $task) { resource status }
      }`,
      {
        payout: {
          beneficiaryName: 'A N Other',
          beneficiaryIban: 'GB35CLRB04066800003435',
          beneficiaryReference: 'Rent',
          amountInMinor: 9007199254740991,
          currency: 'GBP',
        },
        task: { resource: 'ACCOUNT_TRANSACTIONS', id: 'acc-1', from: '2026-01-01', to: '2026-01-31' },
      },
    );
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      verifyAccountHolder: {
        verified: true,
        accountHolderName: 'A N Other',
        matchScore: 0.97,
        report: [{ verifiable: true, iban: 'GB35CLRB04066800003435', accountHolders: [{ name: 'A N Other', matchScore: 0.97 }] }],
      },
      createPayout: { transactionId: payout.transactionId, amountInMinor: 9007199254740991 },
      refundPayment: { amountInMinor: 4294967296, status: 'PENDING' },
      startDataTask: { resource: 'ACCOUNT_TRANSACTIONS', status: 'QUEUED' },
    });
    expect(seenArgs.createPayout).toMatchObject({ amountInMinor: 9007199254740991, currency: 'GBP' });
    expect(seenArgs.refundPayment).toMatchObject({ paymentId: 'pay-1', amountInMinor: 4294967296, reference: 'Sorry' });
    expect(seenArgs.startDataTask).toMatchObject({ resource: DataResource.ACCOUNT_TRANSACTIONS, from: '2026-01-01', to: '2026-01-31' });
  });

  it('rejects a bad literal with the scalar message and BAD_USER_INPUT', async () => {
    const result = await run('{ viewer { accounts { transactions(from: "2026-02-30") { totalCount } } } }');
    expect(result.data).toBeUndefined();
    expect(result.errors).toHaveLength(1);
    expect(result.errors![0]!.message).toBe('Date must be a calendar date in the form YYYY-MM-DD; got "2026-02-30"');
    expect(result.errors![0]!.extensions.code).toBe('BAD_USER_INPUT');
  });

  it('rejects a bad variable with the scalar message and BAD_USER_INPUT', async () => {
    const result = await run('mutation($input: RefundPaymentInput!) { refundPayment(input: $input) { id } }', {
      input: { paymentId: 'pay-1', amountInMinor: 12.5, reference: 'Sorry' },
    });
    expect(result.errors).toHaveLength(1);
    expect(result.errors![0]!.message).toContain('MinorUnits must be a whole number of minor units');
    expect(result.errors![0]!.message).toContain('got 12.5');
    expect(result.errors![0]!.extensions.code).toBe('BAD_USER_INPUT');
  });
});
