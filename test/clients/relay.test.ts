import {
  commitLocalUpdate,
  createOperationDescriptor,
  fetchQuery,
  getSelector,
  requestSubscription,
  type Disposable,
  type SingularReaderSelector,
  type Snapshot,
} from 'relay-runtime';
import AccountSummaryQuery, { type AccountSummaryQuery$data } from '../generated/relay/AccountSummaryQuery.graphql';
import AccountSummaryRefetchQuery from '../generated/relay/AccountSummaryRefetchQuery.graphql';
import AccountSummaryFragment, { type AccountSummary_account$data } from '../generated/relay/AccountSummary_account.graphql';
import AccountTransactionsPageQuery from '../generated/relay/AccountTransactionsPageQuery.graphql';
import AccountTransactionsQuery, { type AccountTransactionsQuery$data } from '../generated/relay/AccountTransactionsQuery.graphql';
import AccountTransactionsFragment, { type AccountTransactions_account$data } from '../generated/relay/AccountTransactions_account.graphql';
import PayoutStatusQuery, { type PayoutStatusQuery$data } from '../generated/relay/PayoutStatusQuery.graphql';
import PayoutStatusSubscription, { type PayoutStatusSubscription$data } from '../generated/relay/PayoutStatusSubscription.graphql';
import { waitFor } from '../helpers/wait-for';
import { useClientStack } from './client-stack';
import { recordingFetch } from './recorded-fetch';
import { createRelayEnvironment } from './recipes/relay';

/*
 * relay-runtime with artifacts relay-compiler made from schema.graphql (test/clients/relay/*.ts, `npm run codegen`),
 * configured exactly as docs/api.md shows (./recipes/relay.ts), against a real gateway and sandbox. No React here:
 * the test does by hand what usePaginationFragment, useRefetchableFragment and useSubscription do (fetch, retain,
 * read, subscribe).
 */

describe('Relay against the sandbox', () => {
  const current = useClientStack();
  const disposables: Disposable[] = [];
  const closers: (() => Promise<void>)[] = [];

  afterEach(async () => {
    for (const disposable of disposables.splice(0).reverse()) disposable.dispose();
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  function relay(fetchImpl?: typeof fetch) {
    const { environment, close } = createRelayEnvironment(current().stack.gateway.url, current().session, fetchImpl);
    closers.push(close);
    return environment;
  }

  it('pages a @connection fragment through node(id:): the next page is appended to the edges the fragment already shows', async () => {
    const recorder = recordingFetch();
    const environment = relay(recorder.fetch);
    const account = current().john.accounts[0]!;
    const expected = account.transactions.slice(0, 20).map((transaction) => transaction.transaction_id);
    const variables = { accountId: account.account.account_id };

    await fetchQuery(environment, AccountTransactionsQuery, variables).toPromise();
    const operation = createOperationDescriptor(AccountTransactionsQuery, variables);
    disposables.push(environment.retain(operation));
    const shown = (environment.lookup(operation.fragment).data as AccountTransactionsQuery$data).viewer.account!;
    let fragment: Snapshot = environment.lookup(getSelector(AccountTransactionsFragment, shown) as SingularReaderSelector);
    disposables.push(environment.subscribe(fragment, (next) => (fragment = next)));
    const data = () => fragment.data as AccountTransactions_account$data;
    expect(data().transactions.edges.map((edge) => edge.node.transactionId)).toEqual(expected.slice(0, 10));

    // #region relay-load-next
    // What usePaginationFragment's loadNext(10) sends: the generated @refetchable query, node(id:) from the end cursor.
    await fetchQuery(environment, AccountTransactionsPageQuery, { id: data().id, count: 10, cursor: data().transactions.pageInfo.endCursor }).toPromise();
    // #endregion relay-load-next
    expect(data().transactions.edges.map((edge) => edge.node.transactionId)).toEqual(expected);
    expect(data().transactions.pageInfo.hasNextPage).toBe(account.transactions.length > 20);
    const sent = recorder.exchanges.at(-1)!.sent;
    expect(sent.operationName).toBe('AccountTransactionsPageQuery');
    expect(sent.query).toMatch(/node\(id: \$id\)/);
  });

  it('refetches an @refetchable Account fragment through node(id:)', async () => {
    const recorder = recordingFetch();
    const environment = relay(recorder.fetch);
    await fetchQuery(environment, AccountSummaryQuery, {}).toPromise();
    const operation = createOperationDescriptor(AccountSummaryQuery, {});
    disposables.push(environment.retain(operation));
    const first = (environment.lookup(operation.fragment).data as AccountSummaryQuery$data).viewer.accounts[0]!;
    let fragment: Snapshot = environment.lookup(getSelector(AccountSummaryFragment, first) as SingularReaderSelector);
    disposables.push(environment.subscribe(fragment, (next) => (fragment = next)));
    const summary = () => fragment.data as AccountSummary_account$data;
    const seeded = current().john.accounts[0]!.account;
    expect(summary()).toMatchObject({ accountId: seeded.account_id, displayName: seeded.display_name });

    // The store drifted from the server (an optimistic update that never landed): a refetch puts the server's answer back.
    commitLocalUpdate(environment, (store) => store.get(summary().id)!.setValue('stale', 'displayName'));
    expect(summary().displayName).toBe('stale');
    // #region relay-refetch
    // What useRefetchableFragment's refetch({}) sends: the generated query, node(id:) with the fragment's own id.
    await fetchQuery(environment, AccountSummaryRefetchQuery, { id: summary().id }).toPromise();
    // #endregion relay-refetch
    expect(summary()).toMatchObject({ accountId: seeded.account_id, displayName: seeded.display_name });
    const sent = recorder.exchanges.at(-1)!.sent;
    expect(sent.operationName).toBe('AccountSummaryRefetchQuery');
    expect(sent.query).toMatch(/node\(id: \$id\)/);
    expect(sent.variables).toEqual({ id: summary().id });
  });

  it('applies a payoutUpdated subscription to the payout a query already shows', async () => {
    const environment = relay();
    const payout = await current().newPayout();

    await fetchQuery(environment, PayoutStatusQuery, {}).toPromise();
    const operation = createOperationDescriptor(PayoutStatusQuery, {});
    disposables.push(environment.retain(operation));
    let shown: Snapshot = environment.lookup(operation.fragment);
    disposables.push(environment.subscribe(shown, (next) => (shown = next)));
    const statusShown = () => (shown.data as PayoutStatusQuery$data).viewer.payouts.find((each) => each.transactionId === payout.transactionId)?.status;
    expect(statusShown()).toBe('authorised');

    const pushed: string[] = [];
    // #region relay-subscription
    disposables.push(
      requestSubscription(environment, {
        subscription: PayoutStatusSubscription,
        variables: { transactionId: payout.transactionId },
        onNext: (response) => pushed.push((response as PayoutStatusSubscription$data).payoutUpdated.status),
      }),
    );
    // #endregion relay-subscription
    await waitFor(() => (pushed.length > 0 ? true : undefined), 'the payout’s current state');
    await current().submitPayouts();
    await waitFor(() => (statusShown() === 'submitted' ? true : undefined), 'the query to show the pushed status', 10_000);
    await waitFor(() => (pushed.length === 2 ? true : undefined), 'the push itself');
    expect(pushed).toEqual(['authorised', 'submitted']);
  });
});
