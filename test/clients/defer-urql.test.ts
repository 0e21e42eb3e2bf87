import { gql, type OperationResult } from '@urql/core';
import { injectFault } from '../helpers/money';
import { waitFor } from '../helpers/wait-for';
import { useClientStack } from './client-stack';
import { createUrqlClient } from './recipes/urql';

/*
 * urql 6 with graphcache (./recipes/urql.ts, as docs/api.md shows it) reading bankgraph's @defer and @stream payloads:
 * its fetchExchange accepts multipart/mixed on every request and merges the parts into one result that updates.
 */

const ACCOUNT_BALANCES = gql`
  query AccountBalances {
    viewer {
      id
      accounts {
        id
        displayName
        ... @defer(label: "balance") {
          balance {
            current
          }
        }
      }
    }
  }
`;
const STREAMED_TRANSACTIONS = gql`
  query StreamedTransactions($accountId: ID!) {
    viewer {
      id
      account(id: $accountId) {
        id
        transactions(first: 5) {
          nodes @stream(initialCount: 1) {
            id
            transactionId
          }
        }
      }
    }
  }
`;

interface BalancesData {
  viewer: { id: string; accounts: { id: string; displayName: string; balance?: { current: string } | null }[] };
}
interface TransactionsData {
  viewer: { account: { transactions: { nodes: { id: string; transactionId: string }[] } } };
}

describe('urql 6 reading @defer and @stream', () => {
  const current = useClientStack();
  const closers: (() => Promise<void>)[] = [];
  const stops: (() => void)[] = [];

  function urql(): ReturnType<typeof createUrqlClient>['client'] {
    const { client, close } = createUrqlClient(current().stack.gateway.url, current().session);
    closers.push(close);
    return client;
  }

  function results<T>(source: { subscribe(next: (result: OperationResult<T>) => void): { unsubscribe(): void } }): OperationResult<T>[] {
    const seen: OperationResult<T>[] = [];
    const subscription = source.subscribe((result) => seen.push(result));
    stops.push(() => subscription.unsubscribe());
    return seen;
  }

  afterEach(async () => {
    for (const stop of stops.splice(0)) stop();
    await Promise.all(closers.splice(0).map((close) => close()));
    await current().stack.sandboxJson('DELETE', '/sandbox/faults');
  });

  it('shows the accounts while their balances are deferred, then the same result with the balances', async () => {
    await injectFault(current().stack, { match: 'GET /data/v1/accounts/*/balance', latencyMs: 400 });
    const client = urql();
    const seen: OperationResult<BalancesData>[] = [];
    // #region urql-defer
    // Each result is the answer so far, `hasNext: true` while parts are still to come.
    const subscription = client.query<BalancesData>(ACCOUNT_BALANCES, {}).subscribe((result) => seen.push(result));
    // #endregion urql-defer
    stops.push(() => subscription.unsubscribe());

    await waitFor(() => (seen.at(-1)?.hasNext === false ? true : undefined), 'the deferred balances', 10_000);
    expect(seen.flatMap((result) => (result.error ? [result.error.message] : []))).toEqual([]);
    const accounts = current().john.accounts.length;
    const first = seen[0]!;
    expect(first.hasNext).toBe(true);
    expect(first.data?.viewer.accounts).toHaveLength(accounts);
    for (const account of first.data!.viewer.accounts) expect(account).not.toHaveProperty('balance');
    const last = seen.at(-1)!.data!.viewer.accounts;
    expect(last.map((account) => typeof account.balance?.current)).toEqual(first.data!.viewer.accounts.map(() => 'string'));
    expect(last.map((account) => account.id)).toEqual(first.data!.viewer.accounts.map((account) => account.id));
  });

  it('shows the first transaction of a streamed list, then the page of five', async () => {
    const client = urql();
    const account = current().john.accounts[0]!;
    const expected = account.transactions.slice(0, 5).map((transaction) => transaction.transaction_id);
    const seen = results(client.query<TransactionsData>(STREAMED_TRANSACTIONS, { accountId: account.account.account_id }));

    await waitFor(() => (seen.at(-1)?.hasNext === false ? true : undefined), 'the streamed transactions', 10_000);
    const lists = seen.map((result) => result.data?.viewer.account.transactions.nodes.map((node) => node.transactionId));
    expect(lists[0]).toEqual(expected.slice(0, 1));
    expect(lists.at(-1)).toEqual(expected);
  });
});
