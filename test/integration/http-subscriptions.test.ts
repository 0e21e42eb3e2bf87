import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/platform/observability/logger';
import { startStack, type Stack } from '../helpers/stack';

/** A subscription sent as a plain HTTP POST (no streaming Accept) is refused with 400 saying where subscriptions are served, and is no fault. */
describe('a subscription sent over plain HTTP', () => {
  let stack: Stack;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(
          ...chunk
            .toString('utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as Record<string, unknown>),
        );
        done();
      },
    });
    stack = await startStack({ gateway: { logger: createLogger('trace', sink) } });
  });

  afterAll(async () => {
    await stack?.close();
  });

  const SUBSCRIBE = `subscription Watch($id: ID!) { refundUpdated(paymentId: $id) { id status } }`;

  it.each([
    ['anonymous, Accept: application/json', undefined, { accept: 'application/json' }],
    ['with a merchant key, no Accept', 'merchant', {}],
    ['with a merchant key, Accept: application/graphql-response+json', 'merchant', { accept: 'application/graphql-response+json' }],
  ])('%s: 400 naming the three ways to subscribe, no error-level log line', async (_case, who, headers: Record<string, string>) => {
    const before = lines.length;
    const result = await stack.graphql<{ refundUpdated: unknown }>(SUBSCRIBE, { id: randomUUID() }, who ? stack.merchantKey : undefined, headers);
    expect(result.status).toBe(400);
    expect(result.data).toBeUndefined();
    expect(result.errors).toHaveLength(1);
    expect(result.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', requestId: expect.any(String) });
    expect(result.errors![0]!.message).toBe(
      'Subscriptions are not served over plain HTTP. Subscribe over a WebSocket to /graphql (the graphql-transport-ws ' +
        'subprotocol, the graphql-ws client), over Server-Sent Events at /graphql/stream (the graphql-sse protocol, ' +
        'Accept: text/event-stream), or on /graphql with Accept: multipart/mixed;subscriptionSpec="1.0" (Apollo\'s ' +
        'multipart subscriptions). Queries and mutations work over HTTP as before.',
    );

    const written = lines.slice(before);
    expect(written.filter((entry) => entry.level === 'error' || entry.level === 'fatal')).toEqual([]);
    expect(written.find((entry) => entry.msg === 'graphql operation')).toMatchObject({
      level: 'info',
      operationName: 'Watch',
      operationType: 'subscription',
      status: 400,
      outcome: 'error',
    });
  });

  it('runs a query of the same document when the request names it as its operation', async () => {
    const chosen = await fetch(`${stack.gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.merchantKey}` },
      body: JSON.stringify({ query: `query Read($id: ID!) { payment(id: $id) { id } } ${SUBSCRIBE}`, variables: { id: randomUUID() }, operationName: 'Read' }),
    });
    expect(chosen.status).toBe(200);
    expect(await chosen.json()).toEqual({ data: { payment: null } });
  });
});
