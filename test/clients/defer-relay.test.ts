import { createOperationDescriptor, getSelector, type Disposable, type SingularReaderSelector } from 'relay-runtime';
import AccountBalancesQuery, { type AccountBalancesQuery$data } from '../generated/relay/AccountBalancesQuery.graphql';
import AccountBalancesFragment, { type AccountBalances_balance$data } from '../generated/relay/AccountBalances_balance.graphql';
import { injectFault } from '../helpers/money';
import { waitFor } from '../helpers/wait-for';
import { useClientStack } from './client-stack';
import { createRelayIncrementalEnvironment, toRelayResponses } from './recipes/relay-incremental';

/*
 * relay-runtime reading bankgraph's @defer and @stream payloads (./recipes/relay-incremental.ts, as docs/api.md shows
 * it): the query test/clients/relay/AccountBalances.ts streams the accounts and defers each one's balance fragment.
 */

/** What the query and each account's deferred fragment showed after one response from the network. */
interface Shown {
  accounts: number;
  balances: (string | undefined)[];
}

describe('Relay reading @defer and @stream', () => {
  const current = useClientStack();
  const disposables: Disposable[] = [];
  const closers: (() => Promise<void>)[] = [];

  afterEach(async () => {
    for (const disposable of disposables.splice(0).reverse()) disposable.dispose();
    await Promise.all(closers.splice(0).map((close) => close()));
    await current().stack.sandboxJson('DELETE', '/sandbox/faults');
  });

  it('turns each incremental part into the {data, label, path} Relay reads, one per streamed item at its index, errors kept', () => {
    const payload = {
      hasNext: true,
      incremental: [
        { items: [{ id: 'b' }, { id: 'c' }], path: ['viewer', 'accounts', 1], label: 'accounts' },
        { data: { balance: { current: '1.00' } }, path: ['viewer', 'accounts', 0], label: 'balance' },
      ],
    };
    expect(toRelayResponses(payload)).toEqual([
      { data: { id: 'b' }, path: ['viewer', 'accounts', 1], label: 'accounts', errors: undefined },
      { data: { id: 'c' }, path: ['viewer', 'accounts', 2], label: 'accounts', errors: undefined },
      { data: { balance: { current: '1.00' } }, path: ['viewer', 'accounts', 0], label: 'balance', errors: undefined },
    ]);
    const errors = [{ message: 'The bank did not answer in time.' }];
    expect(toRelayResponses({ hasNext: false, incremental: [{ data: null, path: ['viewer', 'accounts', 1], label: 'balance', errors }] })).toEqual([
      { data: {}, path: ['viewer', 'accounts', 1], label: 'balance', errors },
    ]);
    expect(toRelayResponses({ hasNext: false })).toEqual([]);
  });

  it('shows the first account, then the streamed accounts, then each deferred balance in its fragment', async () => {
    await injectFault(current().stack, { match: 'GET /data/v1/accounts/*/balance', latencyMs: 400 });
    const { environment, close } = createRelayIncrementalEnvironment(current().stack.gateway.url, current().session);
    closers.push(close);
    const operation = createOperationDescriptor(AccountBalancesQuery, {});
    disposables.push(environment.retain(operation));

    const shown: Shown[] = [];
    const read = (): Shown => {
      const accounts = (environment.lookup(operation.fragment).data as AccountBalancesQuery$data | undefined)?.viewer.accounts ?? [];
      const balances = accounts.map(
        (account) =>
          (environment.lookup(getSelector(AccountBalancesFragment, account) as SingularReaderSelector).data as AccountBalances_balance$data | undefined)
            ?.balance?.current,
      );
      return { accounts: accounts.length, balances };
    };
    let done = false;
    let failed: unknown;
    const subscription = environment.execute({ operation }).subscribe({
      next: () => shown.push(read()),
      error: (error: unknown) => (failed = error),
      complete: () => (done = true),
    });
    disposables.push({ dispose: () => subscription.unsubscribe() });

    await waitFor(() => (done || failed !== undefined ? true : undefined), 'the last payload', 10_000);
    expect(failed).toBeUndefined();
    const accounts = current().john.accounts.length;
    expect(accounts).toBeGreaterThan(1);
    // The initial payload: one account (initialCount: 1), its balance fragment not yet there.
    expect(shown[0]).toEqual({ accounts: 1, balances: [undefined] });
    // Every streamed account shown before any balance: the provider held the balances back.
    const beforeBalances = shown.filter((each) => each.balances.every((balance) => balance === undefined));
    expect(beforeBalances.at(-1)!.accounts).toBe(accounts);
    expect(shown.at(-1)).toEqual({ accounts, balances: Array.from({ length: accounts }, () => expect.any(String)) });
  });
});
