import { Writable } from 'node:stream';
import { createLogger } from '../../src/platform/observability/logger';
import { closeHttpStreams, streamOverHttp } from '../helpers/http-stream-client';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';

/** The README promises a requestId on every error; these are the ones Apollo and graphql-sse produce before any plugin or hook runs. */
describe('requestId on errors the GraphQL libraries produce themselves', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });

  afterAll(async () => {
    await stack?.close();
  });

  const cases: [string, RequestInit & { search?: string; path?: string }][] = [
    ['a CSRF refusal (GET without a preflight header)', { method: 'GET', search: '?query=%7B__typename%7D' }],
    [
      'a batch',
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]) },
    ],
    ['an empty JSON body', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }],
    [
      'variables as a string',
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }', variables: '{}' }) },
    ],
    ['PUT', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) }],
  ];

  const sse = (body: unknown): RequestInit & { path: string } => ({
    path: '/graphql/stream',
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(body),
  });
  // graphql-sse answers these itself, before the stream's operation begins.
  cases.push(['an SSE request without a query', sse({ variables: {} })], ['an SSE request with a query that is not a string', sse({ query: 1 })]);

  it.each(cases)('%s', async (_name, { search = '', path = '/graphql', ...init }: RequestInit & { search?: string; path?: string }) => {
    const response = await fetch(`${stack.gateway.url}${path}${search}`, init);
    expect(response.status).toBeGreaterThanOrEqual(400);
    const requestId = response.headers.get('x-request-id');
    const body = (await response.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
    expect(body.errors.length).toBeGreaterThan(0);
    for (const error of body.errors) {
      expect(error.message.length).toBeGreaterThan(10);
      expect(error.extensions.code).toEqual(expect.any(String));
      expect(error.extensions.requestId).toBe(requestId);
    }
  });
});

/**
 * A client's X-Request-Id is the client's to name its own request by, never the gateway's id for it: a client
 * sending `reconciler` (the id the reconciler's own provider calls carry) must not have its lines filed under it.
 */
describe("a client's X-Request-Id", () => {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  const lines: Record<string, unknown>[] = [];
  let stack: Stack;

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    stack = await startStack({ gateway: { logger: createLogger('info', sink) } });
  });

  afterEach(() => closeHttpStreams());

  afterAll(async () => {
    await stack?.close();
  });

  /** The gateway's id for the request, as its answer names it, after checking that the client's is not it. */
  async function gatewayId(requestId: string | null, errorIds: unknown[]): Promise<string> {
    expect(requestId).toMatch(UUID);
    expect(errorIds.length).toBeGreaterThan(0);
    for (const id of errorIds) expect(id).toBe(requestId);
    const line = await waitFor(() => lines.find((entry) => entry.msg === 'graphql operation' && entry.requestId === requestId), 'the operation line');
    expect(line.clientRequestId).toBe('reconciler');
    return requestId!;
  }

  it('is kept as clientRequestId beside a gateway-made id over HTTP, SSE and multipart; nothing is logged under it', async () => {
    const response = await fetch(`${stack.gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'reconciler' },
      body: JSON.stringify({ query: '{ viewer { accounts { id } } }' }),
    });
    const body = (await response.json()) as { errors: { extensions: { code: string; requestId: unknown } }[] };
    expect(body.errors[0]!.extensions.code).toBe('UNAUTHENTICATED');
    const ids = [
      await gatewayId(
        response.headers.get('x-request-id'),
        body.errors.map((error) => error.extensions.requestId),
      ),
    ];
    for (const transport of ['sse', 'multipart'] as const) {
      const live = streamOverHttp(transport, stack.gateway.url, 'subscription { dataTaskUpdated(id: "t-1") { id } }', undefined, {
        headers: { 'x-request-id': 'reconciler' },
      });
      const result = await live.next();
      expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      ids.push(
        await gatewayId(
          (await live.head).requestId,
          result.errors!.map((error) => error.extensions?.requestId),
        ),
      );
    }
    expect(new Set(ids).size).toBe(3);
    expect(lines.filter((entry) => entry.requestId === 'reconciler')).toEqual([]);
    // Every line written for those requests names the client's id beside the gateway's.
    const theirs = lines.filter((entry) => ids.includes(entry.requestId as string));
    expect(theirs.length).toBeGreaterThanOrEqual(3);
    for (const entry of theirs) expect(entry.clientRequestId).toBe('reconciler');
  });

  it('names an SSE stream refused for its persisted document, in its error and in the operation line', async () => {
    const response = await fetch(`${stack.gateway.url}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-request-id': 'reconciler' },
      body: JSON.stringify({ documentId: 'no-such-id' }),
    });
    const text = await response.text();
    const next = /event: next\ndata: (.*)\n/.exec(text)?.[1];
    const result = JSON.parse(next ?? 'null') as { errors: { extensions: { code: string; requestId: unknown } }[] };
    expect(result.errors[0]!.extensions.code).toBe('PERSISTED_QUERY_NOT_SUPPORTED');
    const requestId = await gatewayId(
      response.headers.get('x-request-id'),
      result.errors.map((error) => error.extensions.requestId),
    );
    const line = lines.find((entry) => entry.msg === 'graphql operation' && entry.requestId === requestId);
    expect(line).toMatchObject({ transport: 'sse', outcome: 'error', errorCodes: ['PERSISTED_QUERY_NOT_SUPPORTED'] });
  });

  it('is left out of the logs when it does not look like an id, and a request without one has none', async () => {
    for (const given of ['a b', 'x'.repeat(65), undefined]) {
      const response = await fetch(`${stack.gateway.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(given === undefined ? {} : { 'x-request-id': given }) },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(response.status).toBe(200);
      const requestId = response.headers.get('x-request-id');
      expect(requestId).toMatch(UUID);
      const line = await waitFor(() => lines.find((entry) => entry.msg === 'graphql operation' && entry.requestId === requestId), 'the operation line');
      expect(line).not.toHaveProperty('clientRequestId');
    }
  });
});
