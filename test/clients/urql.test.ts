import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gql, type Client } from '@urql/core';
import { buildSchema, isObjectType } from 'graphql';
import { waitFor } from '../helpers/wait-for';
import { useClientStack } from './client-stack';
import { recordingFetch, type Exchange } from './recorded-fetch';
import { createUrqlClient, VALUE_TYPES } from './recipes/urql';

/*
 * urql 6 with graphcache, configured exactly as docs/api.md shows (./recipes/urql.ts), against a real gateway and
 * sandbox.
 */

// #region urql-documents
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
const CREATE_PAYOUT = gql`
  mutation CreatePayout($input: CreatePayoutInput!) {
    createPayout(input: $input) {
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
const START_DATA_TASK = gql`
  mutation StartDataTask($input: StartDataTaskInput!) {
    startDataTask(input: $input) {
      id
      status
    }
  }
`;
const TASK_STATUS = gql`
  query TaskStatus($id: ID!) {
    dataTask(id: $id) {
      id
      status
    }
  }
`;
const TASK_RESULTS = gql`
  query TaskResults($id: ID!) {
    dataTask(id: $id) {
      id
      status
      completedAt
      accounts {
        id
        displayName
      }
    }
  }
`;
// #endregion urql-documents

interface PayoutsData {
  viewer: { id: string; payouts: { transactionId: string; status: string }[] };
}

describe('urql 6 with graphcache against the sandbox', () => {
  const current = useClientStack();
  const cleanups: (() => Promise<void> | void)[] = [];

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function urql(): { client: Client; exchanges: Exchange[] } {
    const recorder = recordingFetch();
    const { client, close } = createUrqlClient(current().stack.gateway.url, current().session, recorder.fetch);
    cleanups.push(close);
    return { client, exchanges: recorder.exchanges };
  }

  it('runs a mutation, then a query, and a payoutUpdated push over SSE updates the payout the query shows, from the cache', async () => {
    // graphql-sse's client uses the global fetch: watched to see the subscription go to /graphql/stream.
    const fetches = jest.spyOn(globalThis, 'fetch');
    cleanups.push(async () => fetches.mockRestore());
    const { client, exchanges } = urql();
    const input = {
      beneficiaryName: 'John Doe',
      beneficiaryIban: current().john.accounts[0]!.account.account_number.iban,
      beneficiaryReference: 'urql recipe',
      amountInMinor: 700,
      currency: 'GBP',
    };
    const created = await client.mutation(CREATE_PAYOUT, { input }).toPromise();
    expect(created.error).toBeUndefined();
    const { transactionId, status } = created.data.createPayout as { transactionId: string; status: string };
    expect(status).toBe('authorised');

    const shown: PayoutsData[] = [];
    const errors: unknown[] = [];
    const query = client.query<PayoutsData>(VIEWER_PAYOUTS, {}).subscribe((result) => {
      if (result.error) errors.push(result.error);
      if (result.data) shown.push(result.data);
    });
    cleanups.push(() => query.unsubscribe());
    const statusShown = (): string | undefined => shown.at(-1)?.viewer.payouts.find((payout) => payout.transactionId === transactionId)?.status;
    await waitFor(statusShown, 'the viewer’s payouts');
    expect(statusShown()).toBe('authorised');

    const pushed: string[] = [];
    const live = client.subscription<{ payoutUpdated: { status: string } }>(PAYOUT_UPDATED, { transactionId }).subscribe((result) => {
      if (result.data) pushed.push(result.data.payoutUpdated.status);
    });
    cleanups.push(() => live.unsubscribe());
    await waitFor(() => (pushed.length > 0 ? true : undefined), 'the payout’s current state');
    const renders = shown.length;
    const requests = exchanges.length;

    await current().submitPayouts();
    await waitFor(() => (statusShown() === 'submitted' ? true : undefined), 'the query to show the pushed status', 10_000);
    await waitFor(() => (pushed.length === 2 ? true : undefined), 'the push itself');
    expect(pushed).toEqual(['authorised', 'submitted']);
    // The query was answered again from graphcache (a new render), not by another request.
    expect(shown.length).toBeGreaterThan(renders);
    expect(exchanges).toHaveLength(requests);
    expect(errors).toEqual([]);
    expect(fetches.mock.calls.filter(([input]) => String(input).endsWith('/graphql/stream'))).toHaveLength(1);
  });

  it('normalises by id with no configuration: a later query for a data task updates the task an earlier query shows', async () => {
    const { stack, session } = current();
    const { client, exchanges } = urql();
    const started = await client.mutation(START_DATA_TASK, { input: { resource: 'ACCOUNTS' } }).toPromise();
    expect(started.error).toBeUndefined();
    const id = (started.data.startDataTask as { id: string }).id;

    const shown: string[] = [];
    const query = client.query<{ dataTask: { status: string } }>(TASK_STATUS, { id }).subscribe((result) => {
      if (result.data) shown.push(result.data.dataTask.status);
    });
    cleanups.push(() => query.unsubscribe());
    await waitFor(() => shown.at(-1), 'the task’s status');
    expect(shown).toEqual(['QUEUED']);

    // The provider finishes the task and tells the gateway by webhook; the app does not know yet.
    await stack.sandboxJson('POST', '/sandbox/clock', { advanceSeconds: 1 });
    const done = `query Done($id: ID!) { dataTask(id: $id) { status } }`;
    await waitFor(
      async () => ((await stack.graphql<{ dataTask: { status: string } }>(done, { id }, session)).data?.dataTask.status === 'SUCCEEDED' ? true : undefined),
      'the webhook to finish the task',
    );
    expect(shown.at(-1)).toBe('QUEUED');

    // Another screen reads the task with its results; the first query's task is the same entity (DataTask:<id>).
    const results = await client.query(TASK_RESULTS, { id }, { requestPolicy: 'network-only' }).toPromise();
    expect(results.data.dataTask).toMatchObject({ id, status: 'SUCCEEDED', accounts: expect.any(Array) });
    await waitFor(() => (shown.at(-1) === 'SUCCEEDED' ? true : undefined), 'the first query to show the finished task');
    expect(exchanges.filter(({ sent }) => sent.operationName === 'TaskStatus')).toHaveLength(1);
  });

  it('keys every type of the schema: a nested account graph is cached with no graphcache warning', async () => {
    const schema = buildSchema(readFileSync(join(__dirname, '..', '..', 'schema.graphql'), 'utf8'));
    const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].map((root) => root?.name));
    const withoutId = Object.values(schema.getTypeMap())
      .filter((type) => isObjectType(type) && !type.name.startsWith('__') && !roots.has(type.name) && !('id' in type.getFields()))
      .map((type) => type.name);
    expect([...VALUE_TYPES].sort()).toEqual(withoutId.sort());

    const warnings = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    cleanups.push(() => warnings.mockRestore());
    const { client } = urql();
    const graph = gql`
      query NestedGraph {
        viewer {
          id
          accounts {
            id
            balance {
              current
            }
            accountNumber {
              iban
            }
            transactions(first: 2) {
              pageInfo {
                hasNextPage
                endCursor
              }
              edges {
                cursor
                node {
                  id
                  amount {
                    amount
                    currency
                  }
                  meta {
                    providerTransactionCategory
                  }
                }
              }
            }
          }
        }
      }
    `;
    const answer = await client.query(graph, {}).toPromise();
    expect(answer.error).toBeUndefined();
    expect((answer.data as { viewer: { accounts: unknown[] } }).viewer.accounts.length).toBeGreaterThan(0);
    expect(warnings.mock.calls.map((call) => String(call[0]))).toEqual([]);
  });
});
