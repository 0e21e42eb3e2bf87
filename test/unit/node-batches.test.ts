import { randomUUID } from 'node:crypto';
import { dataTaskNodeType } from '../../src/data-tasks/data-task-node.resolver';
import { DataTaskService, type DataTaskServiceDeps } from '../../src/data-tasks/data-task.service';
import type { DataTaskRecord } from '../../src/data-tasks/data-task.store';
import { payoutNodeType } from '../../src/payouts/payout-node.resolver';
import { PayoutService } from '../../src/payouts/payout.service';
import type { PayoutStore, PayoutRecord } from '../../src/payouts/payout.store';
import { AWAITING_APPROVAL } from '../../src/payouts/payout-status';
import type { MoneyConfig } from '../../src/platform/config/config';
import type { Principal } from '../../src/platform/access/principal';
import type { OperationContext } from '../../src/platform/graphql/operation-context';
import type { Logger } from '../../src/platform/observability/logger';

/** The parts of an operation's context a node type uses. */
function contextOf(principal: Principal): OperationContext {
  const scoped = new Map<unknown, unknown>();
  return {
    principal,
    callOptions: () => ({ requestId: 'test' }),
    scoped: <T>(key: unknown, make: () => T): T => {
      if (!scoped.has(key)) scoped.set(key, make());
      return scoped.get(key) as T;
    },
  } as unknown as OperationContext;
}

const keysOf = (ids: readonly string[]): string[][] => ids.map((id) => [id]);

describe('node types read a batch in one store query', () => {
  const merchant: Principal = { kind: 'merchant', keyId: 'key-1' };
  const user: Principal = { kind: 'user', userId: 'user_1' };

  function payoutsOver(records: PayoutRecord[]) {
    const ledger = {
      get: jest.fn(async () => undefined),
      getMany: jest.fn(async (ids: readonly string[]) => records.filter((record) => ids.includes(record.transactionId))),
    };
    const provider = { createWithdrawal: jest.fn(), getWithdrawal: jest.fn(async () => Promise.reject(new Error('not asked for'))) };
    const service = new PayoutService({
      provider,
      ledger: ledger as unknown as PayoutStore,
      beneficiaries: { findForUser: async () => undefined, holdersOf: async () => [] },
      events: { publish: async () => undefined },
      clock: Date.now,
      logger: { warn: jest.fn() } as unknown as Logger,
      settings: {} as MoneyConfig,
    });
    return { ledger, provider, type: payoutNodeType(service) };
  }

  const recordOf = (owner: PayoutRecord['owner']): PayoutRecord => {
    const transactionId = randomUUID();
    return {
      transactionId,
      owner,
      request: {
        transactionId,
        beneficiaryName: 'John Doe',
        beneficiaryIban: 'GB33BUKB20201555555555',
        beneficiaryReference: 'rent',
        currency: 'GBP',
        amountInMinor: 100,
        contextCode: 'withdrawal',
      },
      status: AWAITING_APPROVAL,
      createdAtMs: 1,
      updatedAtMs: 1,
      queuedAtMs: 1,
    };
  };

  it('finds 100 payout ids with one ledger query, and asks the provider for none it does not know', async () => {
    const johns = recordOf({ kind: 'user', userId: 'user_1' });
    const janes = recordOf({ kind: 'user', userId: 'user_2' });
    const unknown = Array.from({ length: 98 }, () => randomUUID());
    const { ledger, provider, type } = payoutsOver([johns, janes]);
    const ids = [johns.transactionId, janes.transactionId, ...unknown];

    const asMerchant = await type.load(keysOf(ids), contextOf(merchant));
    expect(ledger.getMany).toHaveBeenCalledTimes(1);
    expect(ledger.get).not.toHaveBeenCalled();
    expect(provider.getWithdrawal).not.toHaveBeenCalled();
    expect(asMerchant.map((node) => (node && !(node instanceof Error) ? (node as { transactionId: string }).transactionId : node))).toEqual([
      johns.transactionId,
      janes.transactionId,
      ...unknown.map(() => null),
    ]);

    // A session reads only its own, from the same one query.
    const asJohn = await type.load(keysOf([...ids, 'not-a-uuid']), contextOf(user));
    expect(ledger.getMany).toHaveBeenCalledTimes(2);
    expect(asJohn.filter((node) => node !== null)).toHaveLength(1);
    expect(asJohn.at(-1)).toBeNull();
  });

  it('finds 100 data task ids with one store query, each only to the user who started it', async () => {
    const task = (userId: string): DataTaskRecord => ({ id: randomUUID(), userId, resource: 'ACCOUNTS' }) as unknown as DataTaskRecord;
    const own = task('user_1');
    const other = task('user_2');
    const store = {
      find: jest.fn(async () => undefined),
      findMany: jest.fn(async (ids: readonly string[]) => [own, other].filter((item) => ids.includes(item.id))),
    };
    const service = new DataTaskService({ store } as unknown as DataTaskServiceDeps);
    const ids = [own.id.toUpperCase(), other.id, ...Array.from({ length: 97 }, () => randomUUID()), 'garbage'];
    const findOwnMany = jest.spyOn(service, 'findOwnMany');
    const answers = await service.findOwnMany('user_1', ids);
    expect(store.findMany).toHaveBeenCalledTimes(1);
    expect(store.find).not.toHaveBeenCalled();
    expect(answers.map((answer) => answer?.id)).toEqual([own.id, ...ids.slice(1).map(() => undefined)]);
    // The node type hands the whole batch to that one read; a merchant key reads no task.
    const type = dataTaskNodeType(service);
    expect(await type.load(keysOf(ids), contextOf(merchant))).toEqual(ids.map(() => null));
    findOwnMany.mockClear();
    await type.load(keysOf(ids), contextOf(user));
    expect(findOwnMany).toHaveBeenCalledTimes(1);
    expect(store.findMany).toHaveBeenCalledTimes(2);
  });
});
