import {
  createOperationDescriptor,
  fetchQuery,
  getSelector,
  requestSubscription,
  type Disposable,
  type SingularReaderSelector,
  type Snapshot,
} from 'relay-runtime';
import AccountTransactionsPageQuery from '../generated/relay/AccountTransactionsPageQuery.graphql';
import AccountTransactionsQuery, { type AccountTransactionsQuery$data } from '../generated/relay/AccountTransactionsQuery.graphql';
import AccountTransactionsFragment, { type AccountTransactions_viewer$data } from '../generated/relay/AccountTransactions_viewer.graphql';
import PayoutStatusQuery, { type PayoutStatusQuery$data } from '../generated/relay/PayoutStatusQuery.graphql';
import PayoutStatusSubscription, { type PayoutStatusSubscription$data } from '../generated/relay/PayoutStatusSubscription.graphql';
import { waitFor } from '../helpers/wait-for';
import { useClientStack } from './client-stack';
import { createRelayEnvironment } from './recipes/relay';

/*
 * relay-runtime with artifacts relay-compiler made from schema.graphql (test/clients/relay/*.ts, `npm run codegen`),
 * configured exactly as docs/api.md shows (./recipes/relay.ts), against a real gateway and sandbox. No React here:
 * the test does by hand what usePaginationFragment and useSubscription do (fetch, retain, read, subscribe).
 */

describe('Relay against the sandbox', () => {
  const current = useClientStack();
  const disposables: Disposable[] = [];
  const closers: (() => Promise<void>)[] = [];

  afterEach(async () => {
    for (const disposable of disposables.splice(0).reverse()) disposable.dispose();
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  function relay() {
    const { environment, close } = createRelayEnvironment(current().stack.gateway.url, current().session);
    closers.push(close);
    return environment;
  }

  it('pages a @connection fragment: the next page is appended to the edges the fragment already shows', async () => {
    const environment = relay();
    const account = current().john.accounts[0]!;
    const expected = account.transactions.slice(0, 20).map((transaction) => transaction.transaction_id);
    const variables = { accountId: account.account.account_id };

    await fetchQuery(environment, AccountTransactionsQuery, variables).toPromise();
    const operation = createOperationDescriptor(AccountTransactionsQuery, variables);
    disposables.push(environment.retain(operation));
    const viewer = (environment.lookup(operation.fragment).data as AccountTransactionsQuery$data).viewer;
    let fragment: Snapshot = environment.lookup(getSelector(AccountTransactionsFragment, viewer) as SingularReaderSelector);
    disposables.push(environment.subscribe(fragment, (next) => (fragment = next)));
    const connection = () => (fragment.data as AccountTransactions_viewer$data).account!.transactions;
    expect(connection().edges.map((edge) => edge.node.id)).toEqual(expected.slice(0, 10));

    // #region relay-load-next
    // What usePaginationFragment's loadNext(10) sends: the generated @refetchable query, from the end cursor.
    await fetchQuery(environment, AccountTransactionsPageQuery, { ...variables, count: 10, cursor: connection().pageInfo.endCursor }).toPromise();
    // #endregion relay-load-next
    expect(connection().edges.map((edge) => edge.node.id)).toEqual(expected);
    expect(connection().pageInfo.hasNextPage).toBe(account.transactions.length > 20);
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

  // Needs `interface Node` and `node(id:)` in the schema: then one fragment on Account with @refetchable, compiled by
  // the same `npm run codegen`, and refetched as useRefetchableFragment does.
  it.todo('refetches an @refetchable Account fragment through node(id:)');
});
