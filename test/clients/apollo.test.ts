import type { ApolloClient } from '@apollo/client';
import { gql } from '@apollo/client';
import { createHash } from 'node:crypto';
import { waitFor } from '../helpers/wait-for';
import { useClientStack } from './client-stack';
import { latestOf, recordingFetch } from './recorded-fetch';
import { createApolloClient, createApolloHttpOnlyClient } from './recipes/apollo';

/*
 * Apollo Client 4, configured exactly as docs/api.md shows (./recipes/apollo.ts), against a real gateway and sandbox.
 */

// #region apollo-documents
const VIEWER_PAYOUTS = gql`
  query ViewerPayouts {
    viewer {
      id
      payouts {
        id
        transactionId
        status
      }
    }
  }
`;
const PAYOUT = gql`
  query Payout($transactionId: ID!) {
    payout(transactionId: $transactionId) {
      id
      transactionId
      status
    }
  }
`;
const PAYOUT_UPDATED = gql`
  subscription PayoutUpdated($transactionId: ID!) {
    payoutUpdated(transactionId: $transactionId) {
      id
      status
    }
  }
`;
const ACCOUNT_TRANSACTIONS = gql`
  query AccountTransactions($accountId: ID!, $first: Int, $after: String) {
    viewer {
      id
      account(id: $accountId) {
        id
        transactions(first: $first, after: $after) {
          edges {
            cursor
            node {
              id
              transactionId
              description
            }
          }
          pageInfo {
            hasNextPage
            endCursor
          }
        }
      }
    }
  }
`;
// #endregion apollo-documents

interface PayoutsData {
  viewer: { payouts: { transactionId: string; status: string }[] };
}
interface TransactionsData {
  viewer: {
    account: { transactions: { edges: { node: { id: string; transactionId: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } };
  };
}

describe('Apollo Client 4 against the sandbox', () => {
  const current = useClientStack();
  const closers: (() => Promise<void>)[] = [];
  const stops: (() => void)[] = [];

  function apollo(): { client: ApolloClient; exchanges: ReturnType<typeof recordingFetch>['exchanges'] } {
    const recorder = recordingFetch();
    const { client, close } = createApolloClient(current().stack.gateway.url, current().session, recorder.fetch);
    closers.push(close);
    return { client, exchanges: recorder.exchanges };
  }

  afterEach(async () => {
    for (const stop of stops.splice(0)) stop();
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  const statusIn = (data: PayoutsData | undefined, transactionId: string): string | undefined =>
    data?.viewer.payouts.find((payout) => payout.transactionId === transactionId)?.status;

  it('sends the hash first, the text only after PERSISTED_QUERY_NOT_FOUND, and the hash alone once the gateway knows it', async () => {
    const hash = createHash('sha256').update(`query ApqProbe {\n  viewer {\n    id\n    __typename\n  }\n}`).digest('hex');
    const first = apollo();
    const probe = gql`
      query ApqProbe {
        viewer {
          id
        }
      }
    `;
    const { data } = await first.client.query({ query: probe });
    expect(data).toEqual({ viewer: { __typename: 'Viewer', id: expect.any(String) } });
    expect(first.exchanges.map(({ sent }) => ({ hash: sent.extensions?.persistedQuery?.sha256Hash, text: sent.query !== undefined }))).toEqual([
      { hash, text: false },
      { hash, text: true },
    ]);
    expect(first.exchanges[0]!.answer.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');

    // Another app instance (a fresh cache) asks for the same operation: one round trip, no text.
    const second = apollo();
    expect((await second.client.query({ query: probe })).data).toEqual(data);
    expect(second.exchanges.map(({ sent }) => ({ hash: sent.extensions?.persistedQuery?.sha256Hash, text: sent.query !== undefined }))).toEqual([
      { hash, text: false },
    ]);
  });

  it('appends the next page of transactions with fetchMore (relayStylePagination)', async () => {
    const { client } = apollo();
    const account = current().john.accounts[0]!;
    const expected = account.transactions.slice(0, 20).map((transaction) => transaction.transaction_id);
    // #region apollo-watch
    const query = client.watchQuery<TransactionsData>({ query: ACCOUNT_TRANSACTIONS, variables: { accountId: account.account.account_id, first: 10 } });
    // #endregion apollo-watch
    const latest = latestOf(query);
    stops.push(latest.stop);
    const ids = (): string[] | undefined =>
      (latest.value()?.data as TransactionsData | undefined)?.viewer.account.transactions.edges.map((edge) => edge.node.transactionId);

    await waitFor(() => (ids()?.length === 10 ? true : undefined), 'the first page');
    expect(ids()).toEqual(expected.slice(0, 10));
    const { endCursor } = (latest.value()!.data as TransactionsData).viewer.account.transactions.pageInfo;
    // #region apollo-fetch-more
    await query.fetchMore({ variables: { after: endCursor } });
    // #endregion apollo-fetch-more
    await waitFor(() => (ids()?.length === 20 ? true : undefined), 'the second page appended to the first');
    expect(ids()).toEqual(expected);
    expect((latest.value()!.data as TransactionsData).viewer.account.transactions.pageInfo.hasNextPage).toBe(account.transactions.length > 20);
  });

  it('normalises: a later query for one payout updates the payout in an earlier viewer query, with no refetch', async () => {
    const payout = await current().newPayout();
    const { client, exchanges } = apollo();
    const viewer = latestOf(client.watchQuery<PayoutsData>({ query: VIEWER_PAYOUTS }));
    stops.push(viewer.stop);
    await waitFor(() => statusIn(viewer.value()?.data as PayoutsData, payout.transactionId), 'the viewer’s payouts');
    expect(statusIn(viewer.value()!.data as PayoutsData, payout.transactionId)).toBe('authorised');
    const viewerReads = exchanges.filter(({ sent }) => sent.operationName === 'ViewerPayouts').length;

    await current().submitPayouts();
    const read = await client.query({ query: PAYOUT, variables: { transactionId: payout.transactionId }, fetchPolicy: 'network-only' });
    expect(read.data).toMatchObject({ payout: { status: 'submitted' } });
    await waitFor(
      () => (statusIn(viewer.value()?.data as PayoutsData, payout.transactionId) === 'submitted' ? true : undefined),
      'the cached payout to update',
    );
    expect(exchanges.filter(({ sent }) => sent.operationName === 'ViewerPayouts')).toHaveLength(viewerReads);
  });

  it('delivers payoutUpdated over graphql-ws and writes it into the cached viewer payouts, with no cache code', async () => {
    const payout = await current().newPayout();
    const { client, exchanges } = apollo();
    const viewer = latestOf(client.watchQuery<PayoutsData>({ query: VIEWER_PAYOUTS }));
    stops.push(viewer.stop);
    await waitFor(() => statusIn(viewer.value()?.data as PayoutsData, payout.transactionId), 'the viewer’s payouts');
    const viewerReads = exchanges.filter(({ sent }) => sent.operationName === 'ViewerPayouts').length;

    const pushed: string[] = [];
    const live = client.subscribe({ query: PAYOUT_UPDATED, variables: { transactionId: payout.transactionId } }).subscribe((result) => {
      pushed.push((result.data as { payoutUpdated: { status: string } }).payoutUpdated.status);
    });
    stops.push(() => live.unsubscribe());
    await waitFor(() => (pushed.length > 0 ? true : undefined), 'the payout’s current state');
    expect(pushed).toEqual(['authorised']);

    await current().submitPayouts();
    // The cache broadcasts to watched queries on its own schedule after the push: wait for what the screen shows.
    await waitFor(
      () => (statusIn(viewer.value()?.data as PayoutsData, payout.transactionId) === 'submitted' ? true : undefined),
      'the cached payout to show the push',
      10_000,
    );
    expect(pushed).toEqual(['authorised', 'submitted']);
    // The viewer query was not read again: the change came over the WebSocket, and none of it over HTTP.
    expect(exchanges.filter(({ sent }) => sent.operationName === 'ViewerPayouts')).toHaveLength(viewerReads);
    expect(exchanges.some(({ sent }) => sent.operationName === 'PayoutUpdated')).toBe(false);
  });

  it('delivers payoutUpdated over HttpLink alone, as multipart HTTP parts, with no WebSocket', async () => {
    const payout = await current().newPayout();
    const accepts: string[] = [];
    // Passes every request through, keeping the Accept it was sent with (a streamed answer cannot be read whole).
    const fetchImpl: typeof fetch = (input, init) => {
      accepts.push(new Headers(init?.headers).get('accept') ?? '');
      return fetch(input, init);
    };
    const { client, close } = createApolloHttpOnlyClient(current().stack.gateway.url, current().session, fetchImpl);
    stops.push(close);
    const pushed: string[] = [];
    const errors: unknown[] = [];
    const live = client.subscribe({ query: PAYOUT_UPDATED, variables: { transactionId: payout.transactionId } }).subscribe({
      next: (result) => {
        if (result.error) errors.push(result.error);
        if (result.data) pushed.push((result.data as { payoutUpdated: { status: string } }).payoutUpdated.status);
      },
      error: (error: unknown) => errors.push(error),
    });
    stops.push(() => live.unsubscribe());
    await waitFor(() => (pushed.length > 0 ? true : undefined), 'the payout’s current state');
    expect(pushed).toEqual(['authorised']);

    await current().submitPayouts();
    await waitFor(() => (pushed.length === 2 ? true : undefined), 'the push', 10_000);
    expect(pushed).toEqual(['authorised', 'submitted']);
    expect(errors).toEqual([]);
    expect(accepts.at(-1)).toMatch(/^multipart\/mixed;.*subscriptionSpec=1\.0/);
  });
});
