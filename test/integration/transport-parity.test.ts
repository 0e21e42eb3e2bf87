import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { deferredOver, type DeferredPayload, type DeferTransport } from '../helpers/deferred-client';
import { fixtures, injectFault, paymentsIn, user } from '../helpers/money';
import { streamOverHttp, type StreamTransport } from '../helpers/http-stream-client';
import { startStack, type Stack } from '../helpers/stack';

interface Seen {
  data?: unknown;
  errors?: { message: string; path?: unknown; extensions?: Record<string, unknown> }[];
}

const MANIFEST_DOCUMENT = 'query Typename { __typename }';
const MANIFEST_ID = 'parity-viewer-1';
const MANIFEST_ID_DOCUMENT = 'query ViewerId { viewer { id } }';
const DEFERRED_ID = 'parity-deferred-1';
const DEFERRED_DOCUMENT = `query DeferredAccounts {
  viewer { id ... @defer(label: "accounts") { accounts { id displayName balance { current } } } cards @stream(initialCount: 0) { id } }
}`;
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const DEFER_TRANSPORTS: DeferTransport[] = ['http', 'ws', 'sse'];

/** What a client reads of an error: its message, path and extensions but the request id. */
function withoutRequestIds(errors: Seen['errors']): Seen['errors'] {
  return errors?.map(({ message, path, extensions }) => {
    const { requestId: _requestId, ...rest } = extensions ?? {};
    return { message, path, extensions: rest };
  });
}

/**
 * What a client merges from a deferred operation's payloads: the first payload, every deferred or streamed part
 * (in path and label order: how the executor groups parts into payloads depends on what came back first) and
 * whether the last payload ended it. Request ids are left out.
 */
function merged(payloads: DeferredPayload[]): unknown {
  const [first, ...rest] = payloads;
  const parts = rest
    .flatMap((payload) => payload.incremental ?? [])
    .map((part) => ({ ...part, errors: withoutRequestIds(part.errors) }))
    .sort((a, b) => `${JSON.stringify(a.path)} ${a.label}`.localeCompare(`${JSON.stringify(b.path)} ${b.label}`));
  return { data: first?.data ?? null, errors: withoutRequestIds(first?.errors), hasNext: first?.hasNext, parts, last: payloads.at(-1)?.hasNext };
}

/**
 * The same operations over HTTP, WebSocket and Server-Sent Events (and subscriptions over WebSocket, SSE and Apollo's
 * multipart HTTP), answered or refused at every stage a request passes (limits, validation, authorization, persisted
 * documents): the client must see the same data and the same errors whatever the transport. Only the request id
 * differs (one per request) and is left out of the comparison.
 */
describe('HTTP, WebSocket, SSE and multipart give a client the same answers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bankgraph-parity-'));
  const manifestPath = join(dir, 'manifest.json');
  writeFileSync(
    manifestPath,
    JSON.stringify({ [sha256(MANIFEST_DOCUMENT)]: MANIFEST_DOCUMENT, [MANIFEST_ID]: MANIFEST_ID_DOCUMENT, [DEFERRED_ID]: DEFERRED_DOCUMENT }),
  );
  let stack: Stack;
  let john: string;
  let paymentId: string;

  beforeAll(async () => {
    stack = await startStack({
      env: {
        // Every case is one principal's requests over four transports in quick succession: the rate limit (its own
        // tests cover it on every transport) would refuse some of them on a fast machine.
        RATE_LIMIT_PER_SECOND: '0',
        PERSISTED_DOCUMENTS: 'allow',
        PERSISTED_DOCUMENTS_MANIFEST: manifestPath,
        GRAPHQL_MAX_DEPTH: '8',
        GRAPHQL_MAX_ALIASES: '3',
        GRAPHQL_MAX_COST: '400',
      },
    });
    john = await stack.signIn('john', 'doe');
    paymentId = paymentsIn(await fixtures(stack), 'settled')[0]!.id;
  });

  afterAll(async () => {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function overHttp(body: Record<string, unknown>, token: string | undefined): Promise<Seen> {
    const response = await fetch(`${stack.gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    return (await response.json()) as Seen;
  }

  async function overWs(body: Record<string, unknown>, token: string | undefined): Promise<Seen> {
    const client = createClient({
      url: `${stack.gateway.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: token ? { authorization: `Bearer ${token}` } : {},
      retryAttempts: 0,
      lazy: true,
    });
    try {
      return await new Promise<Seen>((resolve, reject) => {
        client.subscribe(
          { query: '', ...body },
          {
            next: (result) => resolve(result as Seen),
            error: (error) => (Array.isArray(error) ? resolve({ errors: error }) : reject(error instanceof Error ? error : new Error(JSON.stringify(error)))),
            complete: () => undefined,
          },
        );
      });
    } finally {
      await client.dispose();
    }
  }

  /** The operation as the first result of an SSE or multipart stream. */
  async function overStream(transport: StreamTransport, body: Record<string, unknown>, token: string | undefined): Promise<Seen> {
    const { query = '', variables, ...rest } = body;
    const live = streamOverHttp<unknown>(transport, stack.gateway.url, query as string, variables as Record<string, unknown> | undefined, {
      token,
      body: rest,
    });
    try {
      return (await live.next()) as Seen;
    } finally {
      live.close();
    }
  }

  /** What a client reads: the data, and each error's message, path and extensions but the request id. */
  function seen(answer: Seen): Seen {
    return { data: answer.data ?? null, errors: withoutRequestIds(answer.errors) };
  }

  const deep = '{ __schema { types { fields { type { ofType { ofType { ofType { ofType { name } } } } } } } } }';
  const cases: [string, () => Record<string, unknown>, () => string | undefined, (answer: Seen) => void][] = [
    ['an answered query', () => ({ query: '{ viewer { accounts { id displayName currency } } }' }), () => john, (a) => expect(a.errors).toBeUndefined()],
    ['a query too deep', () => ({ query: deep }), () => john, (a) => expect(a.errors?.[0]?.extensions).toMatchObject({ reason: 'OPERATION_LIMIT' })],
    [
      'a query with too many aliases',
      () => ({ query: '{ a: viewer { id } b: viewer { id } c: viewer { id } d: viewer { id } }' }),
      () => john,
      (a) => expect(a.errors?.[0]?.extensions).toMatchObject({ reason: 'OPERATION_LIMIT' }),
    ],
    [
      'a query that costs too much',
      () => ({ query: '{ viewer { accounts { transactions(first: 100) { nodes { amount { amount } } } } } }' }),
      () => john,
      (a) => expect(a.errors?.[0]?.extensions).toMatchObject({ reason: 'OPERATION_LIMIT' }),
    ],
    [
      'a query that does not validate',
      () => ({ query: '{ viewer { nope } }' }),
      () => john,
      (a) => expect(a.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'GRAPHQL_VALIDATION_FAILED' }),
    ],
    [
      'a field the caller may not read',
      () => ({ query: `{ payment(id: "${paymentId}") { id } }` }),
      () => john,
      (a) => expect(a.errors?.[0]?.extensions?.code).toBe('FORBIDDEN'),
    ],
    [
      'a query of nobody signed in',
      () => ({ query: '{ viewer { id } }' }),
      () => undefined,
      (a) => expect(a.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED'),
    ],
    [
      'a persisted document by its hash',
      () => ({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256(MANIFEST_DOCUMENT) } } }),
      () => john,
      (a) => expect(a.data).toEqual({ __typename: 'Query' }),
    ],
    [
      'an unknown persisted document',
      () => ({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256('query Unknown { __typename }') } } }),
      () => john,
      (a) => expect(a.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND'),
    ],
    [
      'a persisted document by its id',
      () => ({ documentId: MANIFEST_ID }),
      () => john,
      (a) => expect((a.data as { viewer: { id: string } }).viewer.id).toEqual(expect.any(String)),
    ],
    [
      'a persisted document by its sha256 document id',
      () => ({ documentId: `sha256:${sha256(MANIFEST_DOCUMENT)}` }),
      () => john,
      (a) => expect(a.data).toEqual({ __typename: 'Query' }),
    ],
    [
      'an unknown persisted document id',
      () => ({ documentId: 'no-such-document' }),
      () => john,
      (a) => expect(a.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND'),
    ],
    [
      'an APQ hash sent with a text it is not the hash of',
      () => ({ query: 'query Mismatch { __typename }', extensions: { persistedQuery: { version: 1, sha256Hash: sha256(MANIFEST_DOCUMENT) } } }),
      () => john,
      (a) => expect(a.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_HASH_MISMATCH'),
    ],
    [
      'a query that does not parse',
      () => ({ query: '{ viewer { id }' }),
      () => john,
      (a) => expect(a.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'GRAPHQL_PARSE_FAILED' }),
    ],
    [
      'a variable of the wrong type',
      () => ({ query: 'query Q($n: Int) { viewer { accounts { transactions(first: $n) { totalCount } } } }', variables: { n: 'many' } }),
      () => john,
      (a) => expect(a.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT'),
    ],
    [
      'a mutation the caller may not run',
      () => ({ query: 'mutation { refundPayment(input: { paymentId: "nope", reference: "r" }) { id } }' }),
      () => undefined,
      (a) => expect(a.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED'),
    ],
  ];

  it('an APQ hash taught over one transport runs from its hash alone over both', async () => {
    for (const [teach, name] of [
      [overHttp, 'TaughtOverHttp'],
      [overWs, 'TaughtOverWs'],
    ] as const) {
      const text = `query ${name} { viewer { id } }`;
      const persistedQuery = { version: 1, sha256Hash: sha256(text) };
      const taught = await teach({ query: text, extensions: { persistedQuery } }, john);
      expect(taught.errors).toBeUndefined();
      const http = await overHttp({ extensions: { persistedQuery } }, john);
      expect(seen(http)).toEqual(seen(taught));
      expect(seen(await overWs({ extensions: { persistedQuery } }, john))).toEqual(seen(http));
      expect(seen(await overStream('sse', { extensions: { persistedQuery } }, john))).toEqual(seen(http));
    }
  });

  it('a query one of whose fields fails at the provider: the rest answered, the same error on both', async () => {
    const accountId = user(await fixtures(stack), 'john').accounts[0]!.account.account_id;
    await injectFault(stack, { match: `GET /data/v1/accounts/${accountId}/balance`, status: 400, body: { error: 'invalid_request', error_description: 'no' } });
    try {
      const body = { query: '{ viewer { accounts { id balance { current } } } }' };
      const http = await overHttp(body, john);
      expect(http.errors?.[0]).toMatchObject({ path: ['viewer', 'accounts', 0, 'balance'], extensions: { providerError: 'invalid_request' } });
      expect((http.data as { viewer: { accounts: unknown[] } }).viewer.accounts.length).toBeGreaterThan(1);
      expect(seen(await overWs(body, john))).toEqual(seen(http));
      expect(seen(await overStream('sse', body, john))).toEqual(seen(http));
    } finally {
      await stack.sandboxJson('DELETE', '/sandbox/faults');
    }
  });

  it.each(cases)('%s', async (_what, body, token, isTheCase) => {
    const http = await overHttp(body(), token());
    isTheCase(http);
    expect(seen(await overWs(body(), token()))).toEqual(seen(http));
    expect(seen(await overStream('sse', body(), token()))).toEqual(seen(http));
  });

  /** The same deferred operation over multipart HTTP, WebSocket and SSE: every transport's payloads, merged as a client merges them. */
  async function deferredEverywhere(request: Record<string, unknown>, token: string | undefined): Promise<{ http: DeferredPayload[]; merged: unknown[] }> {
    const answers = await Promise.all(DEFER_TRANSPORTS.map((transport) => deferredOver(transport, stack.gateway.url, request, token)));
    return { http: answers[0]!, merged: answers.map(merged) };
  }

  it('a deferred operation answered: the same payloads over multipart HTTP, WebSocket and SSE', async () => {
    const { http, merged: each } = await deferredEverywhere({ query: DEFERRED_DOCUMENT }, john);
    expect(http[0]).toMatchObject({ hasNext: true, data: { viewer: { id: expect.any(String), cards: [] } } });
    expect(http.at(-1)!.hasNext).toBe(false);
    const parts = http.flatMap((payload) => payload.incremental ?? []);
    expect(parts.filter((part) => part.label === 'accounts')).toHaveLength(1);
    expect(parts.some((part) => part.items)).toBe(true);
    expect(each[1]).toEqual(each[0]);
    expect(each[2]).toEqual(each[0]);
  });

  it('a deferred part whose provider call fails: the same error in the same part on every transport', async () => {
    // A user whose balances no other case has read, and so kept (the provider's answers are cached a few seconds).
    const jane = await stack.signIn('jane', 'doe');
    const accountId = user(await fixtures(stack), 'jane').accounts[0]!.account.account_id;
    await injectFault(stack, { match: `GET /data/v1/accounts/${accountId}/balance`, status: 400, body: { error: 'invalid_request', error_description: 'no' } });
    try {
      const { http, merged: each } = await deferredEverywhere({ query: DEFERRED_DOCUMENT }, jane);
      const failed = http.flatMap((payload) => payload.incremental ?? []).find((part) => part.label === 'accounts')!;
      expect(failed.errors?.[0]).toMatchObject({ path: ['viewer', 'accounts', 0, 'balance'], extensions: { providerError: 'invalid_request' } });
      expect(each[1]).toEqual(each[0]);
      expect(each[2]).toEqual(each[0]);
    } finally {
      await stack.sandboxJson('DELETE', '/sandbox/faults');
    }
  });

  const deferredRefusals: [string, string, (answer: Seen) => void][] = [
    [
      'over the cost limit (a deferred fragment costs what it would inline)',
      '{ viewer { accounts { id ... @defer { transactions(first: 100) { nodes { amount { amount } } } } } } }',
      (a) => expect(a.errors?.[0]?.extensions).toMatchObject({ reason: 'OPERATION_LIMIT', limit: 'maxCost' }),
    ],
    [
      'over the cost limit through a deferred named fragment',
      'query { viewer { accounts { id ...Spent @defer } } } fragment Spent on Account { transactions(first: 100) { nodes { amount { amount } } } }',
      (a) => expect(a.errors?.[0]?.extensions).toMatchObject({ reason: 'OPERATION_LIMIT', limit: 'maxCost' }),
    ],
    [
      'over the depth limit',
      '{ viewer { accounts { ... @defer { transactions { nodes { account { transactions { nodes { account { id } } } } } } } } } }',
      (a) => expect(a.errors?.[0]?.extensions).toMatchObject({ reason: 'OPERATION_LIMIT' }),
    ],
  ];

  it.each(deferredRefusals)('a deferred operation %s: the same refusal on every transport', async (_what, query, isTheCase) => {
    const { http, merged: each } = await deferredEverywhere({ query }, john);
    expect(http).toHaveLength(1);
    isTheCase(http[0] as Seen);
    expect(each[1]).toEqual(each[0]);
    expect(each[2]).toEqual(each[0]);
    // The same operation with nothing deferred is refused with the same words, its estimated cost or depth included.
    const inline = await overHttp({ query: query.replace(/ @defer\b/g, '') }, john);
    expect(seen(inline)).toEqual(seen(http[0] as Seen));
  });

  it('a deferred persisted document by its id and by its APQ hash: the same payloads as its text, on every transport', async () => {
    const byText = (await deferredEverywhere({ query: DEFERRED_DOCUMENT }, john)).merged[0];
    expect((await deferredEverywhere({ documentId: DEFERRED_ID }, john)).merged).toEqual([byText, byText, byText]);
    const text = DEFERRED_DOCUMENT.replace('DeferredAccounts', 'DeferredByHash');
    const persistedQuery = { version: 1, sha256Hash: sha256(text) };
    const unknown = await deferredEverywhere({ extensions: { persistedQuery } }, john);
    expect(unknown.http[0]!.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(unknown.merged[1]).toEqual(unknown.merged[0]);
    expect(unknown.merged[2]).toEqual(unknown.merged[0]);
    expect(merged(await deferredOver('ws', stack.gateway.url, { query: text, extensions: { persistedQuery } }, john))).toEqual(byText);
    expect((await deferredEverywhere({ extensions: { persistedQuery } }, john)).merged).toEqual([byText, byText, byText]);
  });

  const WATCH = 'subscription Watch($id: ID!) { payoutUpdated(transactionId: $id) { transactionId status } }';
  const subscriptionCases: [string, () => Record<string, unknown>, () => string | undefined, (answer: Seen) => void][] = [
    [
      'a subscription of nobody signed in',
      () => ({ query: WATCH, variables: { id: 'p-1' } }),
      () => undefined,
      (a) => expect(a.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED'),
    ],
    [
      'a subscription with too many aliases',
      () => ({ query: 'subscription ($id: ID!) { payoutUpdated(transactionId: $id) { a: status b: status c: status d: status } }', variables: { id: 'p-1' } }),
      () => john,
      (a) => expect(a.errors?.[0]?.extensions).toMatchObject({ reason: 'OPERATION_LIMIT' }),
    ],
    [
      'a subscription that does not validate',
      () => ({ query: 'subscription ($id: ID!) { payoutUpdated(transactionId: $id) { nope } }', variables: { id: 'p-1' } }),
      () => john,
      (a) => expect(a.errors?.[0]?.extensions).toMatchObject({ reason: 'GRAPHQL_VALIDATION_FAILED' }),
    ],
    [
      'a subscription variable of the wrong type',
      () => ({ query: WATCH, variables: { id: { not: 'an id' } } }),
      () => john,
      (a) => expect(a.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT'),
    ],
    [
      'an unknown persisted subscription',
      () => ({ documentId: 'no-such-subscription', variables: { id: 'p-1' } }),
      () => john,
      (a) => expect(a.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND'),
    ],
  ];

  it.each(subscriptionCases)('%s: the same over WebSocket, SSE and multipart', async (_what, body, token, isTheCase) => {
    const ws = await overWs(body(), token());
    isTheCase(ws);
    expect(seen(await overStream('sse', body(), token()))).toEqual(seen(ws));
    expect(seen(await overStream('multipart', body(), token()))).toEqual(seen(ws));
  });
});

describe('under PERSISTED_DOCUMENTS=only, a deferred operation is run from the manifest and refused as text on every transport', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bankgraph-parity-only-'));
  const manifestPath = join(dir, 'manifest.json');
  writeFileSync(manifestPath, JSON.stringify({ [DEFERRED_ID]: DEFERRED_DOCUMENT }));
  let stack: Stack;
  let john: string;

  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_PER_SECOND: '0', PERSISTED_DOCUMENTS: 'only', PERSISTED_DOCUMENTS_MANIFEST: manifestPath } });
    john = await stack.signIn('john', 'doe');
  });

  afterAll(async () => {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the text refused with the same error everywhere; its manifest id answered with the same payloads everywhere', async () => {
    const texts = await Promise.all(DEFER_TRANSPORTS.map((transport) => deferredOver(transport, stack.gateway.url, { query: DEFERRED_DOCUMENT }, john)));
    expect(texts[0]).toHaveLength(1);
    expect(texts[0]![0]!.errors?.[0]?.extensions?.code).toBe('PERSISTED_DOCUMENT_REQUIRED');
    expect(merged(texts[1]!)).toEqual(merged(texts[0]!));
    expect(merged(texts[2]!)).toEqual(merged(texts[0]!));
    const byId = await Promise.all(DEFER_TRANSPORTS.map((transport) => deferredOver(transport, stack.gateway.url, { documentId: DEFERRED_ID }, john)));
    expect(byId[0]![0]).toMatchObject({ hasNext: true, data: { viewer: { id: expect.any(String) } } });
    expect(merged(byId[1]!)).toEqual(merged(byId[0]!));
    expect(merged(byId[2]!)).toEqual(merged(byId[0]!));
  });
});
