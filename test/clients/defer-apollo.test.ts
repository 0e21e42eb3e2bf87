import { gql, type ApolloClient } from '@apollo/client';
import { injectFault } from '../helpers/money';
import { waitFor } from '../helpers/wait-for';
import { useClientStack } from './client-stack';
import { createApolloClient } from './recipes/apollo';

/*
 * Apollo Client 4 with Defer20220824Handler (./recipes/apollo.ts, as docs/api.md shows it) reading bankgraph's
 * @defer and @stream payloads over HttpLink: the first payload shown while the rest is on its way, then merged.
 */

// #region apollo-defer
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
// #endregion apollo-defer
const STREAMED_ACCOUNTS = gql`
  query StreamedAccounts {
    viewer {
      id
      accounts @stream(initialCount: 1) {
        id
        displayName
      }
    }
  }
`;

interface BalancesData {
  viewer: { id: string; accounts: { id: string; displayName: string; balance?: { current: string } | null }[] };
}

/** One request an Apollo client made: what it accepted, and the content type it was answered with. */
interface Exchange {
  accept: string;
  answered: string;
}

/** What a watched query showed, emission by emission. */
interface Shown {
  dataState: string;
  data: BalancesData | undefined;
}

describe('Apollo Client 4 reading @defer and @stream', () => {
  const current = useClientStack();
  const closers: (() => Promise<void>)[] = [];
  const stops: (() => void)[] = [];

  function apollo(exchanges: Exchange[] = []): ApolloClient {
    // Passes every request through, keeping its Accept and the answer's type (a multipart answer cannot be read twice).
    const fetchImpl: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      exchanges.push({ accept: new Headers(init?.headers).get('accept') ?? '', answered: response.headers.get('content-type') ?? '' });
      return response;
    };
    const { client, close } = createApolloClient(current().stack.gateway.url, current().session, fetchImpl);
    closers.push(close);
    return client;
  }

  function watch(client: ApolloClient, query: typeof ACCOUNT_BALANCES): Shown[] {
    const shown: Shown[] = [];
    // #region apollo-defer-watch
    // dataState is "streaming" while a deferred fragment is on its way, "complete" once the last part is merged.
    const subscription = client.watchQuery<BalancesData>({ query }).subscribe((result) => {
      shown.push({ dataState: result.dataState, data: result.data as BalancesData | undefined });
    });
    // #endregion apollo-defer-watch
    stops.push(() => subscription.unsubscribe());
    return shown;
  }

  afterEach(async () => {
    for (const stop of stops.splice(0)) stop();
    await Promise.all(closers.splice(0).map((close) => close()));
    await current().stack.sandboxJson('DELETE', '/sandbox/faults');
  });

  it('shows the accounts while their balances are deferred, then merges the balances into the cache', async () => {
    // The balances come late, so the first payload is read well before the last.
    await injectFault(current().stack, { match: 'GET /data/v1/accounts/*/balance', latencyMs: 400 });
    const exchanges: Exchange[] = [];
    const client = apollo(exchanges);
    const shown = watch(client, ACCOUNT_BALANCES);

    await waitFor(() => (shown.at(-1)?.dataState === 'complete' ? true : undefined), 'the deferred balances', 10_000);
    // APQ's hash, refused with PERSISTED_QUERY_NOT_FOUND (in one), then its text, answered in parts.
    const accept = expect.stringMatching(/^multipart\/mixed;deferSpec=20220824,/);
    expect(exchanges).toEqual([
      { accept, answered: expect.stringMatching(/^application\/graphql-response\+json/) },
      { accept, answered: 'multipart/mixed;boundary="graphql";deferSpec=20220824' },
    ]);
    const streaming = shown.find((result) => result.dataState === 'streaming');
    const accounts = current().john.accounts.map((account) => account.account.account_id);
    expect(streaming?.data?.viewer.accounts).toHaveLength(accounts.length);
    for (const account of streaming!.data!.viewer.accounts) expect(account).not.toHaveProperty('balance');
    const complete = shown.at(-1)!.data!.viewer.accounts;
    expect(complete.map((account) => typeof account.balance?.current)).toEqual(accounts.map(() => 'string'));

    // The merged result is in the normalised cache: each Account holds its balance, read with no request.
    const cached = client.readQuery<BalancesData>({ query: ACCOUNT_BALANCES });
    expect(cached?.viewer.accounts).toEqual(complete);
    expect(exchanges).toHaveLength(2);

    // Another app instance: the gateway knows the hash, so the hash alone is sent, and answered in parts all the same.
    const again: Exchange[] = [];
    const second = watch(apollo(again), ACCOUNT_BALANCES);
    await waitFor(() => (second.at(-1)?.dataState === 'complete' ? true : undefined), 'the deferred balances again', 10_000);
    expect(again.map((exchange) => exchange.answered)).toEqual(['multipart/mixed;boundary="graphql";deferSpec=20220824']);
    expect(second.at(-1)!.data).toEqual(shown.at(-1)!.data);
  });

  it('shows the first account of a streamed list, then the list growing to every account', async () => {
    const client = apollo();
    const shown = watch(client, STREAMED_ACCOUNTS);
    const accounts = current().john.accounts.length;
    expect(accounts).toBeGreaterThan(1);

    // Apollo calls a streamed result complete from its first payload (only a @defer is "streaming"): wait for the list.
    await waitFor(() => (shown.at(-1)?.data?.viewer.accounts.length === accounts ? true : undefined), 'the streamed accounts', 10_000);
    const lengths = shown.flatMap((result) => (result.data ? [result.data.viewer.accounts.length] : []));
    expect(lengths[0]).toBe(1);
    expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
    expect(client.readQuery<BalancesData>({ query: STREAMED_ACCOUNTS })?.viewer.accounts).toHaveLength(accounts);
  });
});
