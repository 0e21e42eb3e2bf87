import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES } from '../../src/platform/errors/gateway-errors';
import { EXAMPLE_TABS } from '../../src/playground/examples';
import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';
import WebSocket from 'ws';

/**
 * Random and mutated requests thrown at the live gateway: GraphQL bodies, variables and query strings, and webhook
 * deliveries. Whatever arrives, the answer is never a 5xx (503 is the one deliberate "try later"), every GraphQL
 * error carries one of the gateway's error codes (ERROR_CODES) and no stack trace, the process survives, and
 * nothing rejects unhandled.
 */
describe('fuzzing the gateway', () => {
  let stack: Stack;
  let session: string;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };

  // Real operations to mutate: the playground's examples and the test operations.
  const documents = [
    ...EXAMPLE_TABS.map((tab) => tab.query),
    readFileSync(join(__dirname, '..', 'operations', 'viewer.graphql'), 'utf8'),
    '{ viewer { accounts { id balance { current } transactions(first: 3) { nodes { id } } } } }',
    'query Payment($id: ID!) { payment(id: $id) { id refunds { id status } } }',
    'mutation { refundPayment(input: { paymentId: "p", reference: "r" }) { id } }',
  ];

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    // No rate limit here: the point is to reach the code behind it with every request.
    stack = await startStack({ env: { RATE_LIMIT_PER_SECOND: '0' } });
    session = await stack.signIn('john', 'doe');
  });

  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await stack?.close();
  });

  /** A string with random edits: characters inserted, deleted or replaced, the way typos and attacks mangle text. */
  const insertion = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('{', '}', '(', ')', '$', '"', '\\', '...', '@skip', ':', '!', '\u0000', '\uD800'));
  const edit = fc.tuple(fc.nat(), fc.nat({ max: 8 }), insertion);
  const mutated = (source: fc.Arbitrary<string>): fc.Arbitrary<string> =>
    fc.tuple(source, fc.array(edit, { maxLength: 6 })).map(([text, edits]) =>
      edits.reduce((acc, [at, remove, insert]) => {
        const position = at % (acc.length + 1);
        return acc.slice(0, position) + insert + acc.slice(position + remove);
      }, text),
    );

  const anyJson = fc.jsonValue({ maxDepth: 4 });
  const variables = fc.oneof(
    anyJson,
    fc.dictionary(
      fc.constantFrom('first', 'id', 'input', 'name', 'transactionId', 'paymentId', 'after', 'from', 'to', 'n'),
      fc.oneof(anyJson, fc.integer(), fc.string()),
    ),
  );
  const graphqlBody = fc.oneof(
    // Well-formed envelopes around mutated documents and random variables.
    fc
      .record(
        {
          query: mutated(fc.constantFrom(...documents)),
          variables: fc.option(variables),
          operationName: fc.option(fc.oneof(fc.string(), fc.constantFrom('ViewerGraph', 'Payment', 'StartDataTask'))),
        },
        { requiredKeys: ['query'] },
      )
      .map((body) => JSON.stringify(body)),
    // Envelopes of the wrong shape: batches, wrong types, extra keys.
    fc
      .oneof(
        anyJson,
        fc.array(fc.record({ query: fc.constantFrom(...documents) }), { maxLength: 3 }),
        fc.record({ query: anyJson, variables: anyJson, extensions: anyJson }),
      )
      .map((body) => JSON.stringify(body)),
    // Not JSON at all.
    mutated(fc.constantFrom('{"query":"{ viewer { accounts { id } } }"}', '{"query":', '[]', 'query { viewer }')),
    fc.string({ maxLength: 200 }),
  );

  const assertSafeAnswer = (status: number, text: string, where: string): void => {
    if (status >= 500 && status !== 503) throw new Error(`${where}: HTTP ${status} ${text.slice(0, 500)}`);
    if (/\n\s+at [\w.<>]+ \(|node_modules\//.test(text)) throw new Error(`${where}: a stack trace reached the client: ${text.slice(0, 500)}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return;
    }
    const errors = (parsed as { errors?: { extensions?: { code?: unknown } }[] } | null)?.errors;
    for (const error of Array.isArray(errors) ? errors : []) {
      if (!(ERROR_CODES as readonly unknown[]).includes(error.extensions?.code))
        throw new Error(`${where}: error code outside ERROR_CODES: ${JSON.stringify(error)}`);
    }
  };

  it("answers any POST /graphql without a 5xx, with the gateway's own error codes only", async () => {
    await fc.assert(
      fc.asyncProperty(
        graphqlBody,
        fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'application/graphql-response+json',
          'text/plain',
          'application/x-www-form-urlencoded',
          '',
        ),
        fc.constantFrom('application/json', 'application/graphql-response+json', '*/*', 'text/html', ''),
        fc.boolean(),
        async (body, contentType, accept, signedIn) => {
          const response = await fetch(`${stack.gateway.url}/graphql`, {
            method: 'POST',
            headers: {
              ...(contentType ? { 'content-type': contentType } : {}),
              ...(accept ? { accept } : {}),
              ...(signedIn ? { authorization: `Bearer ${session}` } : {}),
              'apollo-require-preflight': 'true',
            },
            body,
          });
          assertSafeAnswer(response.status, await response.text(), `POST ${body.slice(0, 200)}`);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('answers any GET /graphql query string without a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          query: fc.option(mutated(fc.constantFrom(...documents))),
          variables: fc.option(
            fc.oneof(
              anyJson.map((value) => JSON.stringify(value)),
              fc.string(),
            ),
          ),
          operationName: fc.option(fc.string()),
        }),
        async (params) => {
          const search = new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
          const response = await fetch(`${stack.gateway.url}/graphql?${search.toString()}`, {
            headers: { accept: 'application/json', 'apollo-require-preflight': 'true' },
          });
          assertSafeAnswer(response.status, await response.text(), `GET ?${search.toString().slice(0, 200)}`);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('answers any webhook delivery without a 5xx other than 503', async () => {
    const refundEvent = fc.record({
      type: fc.oneof(fc.constantFrom('refund_executed', 'refund_failed'), fc.string()),
      event_id: fc.oneof(fc.uuid(), fc.string()),
      event_version: fc.oneof(fc.constant(1), anyJson),
      payment_id: fc.oneof(fc.uuid(), fc.string()),
      refund_id: fc.oneof(fc.uuid(), fc.string()),
      executed_at: fc.oneof(
        fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
        anyJson,
      ),
      failure_reason: fc.option(fc.string()),
    });
    const dataEvent = fc.record({
      task_id: fc.oneof(fc.uuid(), fc.string()),
      status: fc.oneof(fc.constantFrom('Succeeded', 'Failed'), fc.string()),
      results_uri: fc.option(fc.webUrl()),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constant('/webhooks/payments'),
          fc.string({ minLength: 1, maxLength: 60 }).map((token) => `/webhooks/data/${encodeURIComponent(token)}`),
        ),
        fc.oneof(
          refundEvent.map((event) => JSON.stringify(event)),
          dataEvent.map((event) => JSON.stringify(event)),
          anyJson.map((value) => JSON.stringify(value)),
          fc.string({ maxLength: 300 }),
        ),
        fc.option(
          fc.oneof(fc.string(), fc.constantFrom('eyJhbGciOiJFUzUxMiJ9..c2ln', 'eyJhbGciOiJFUzUxMiIsImprdSI6Imh0dHA6Ly9ldmlsLmV4YW1wbGUvandrcyJ9..AAAA')),
        ),
        fc.option(
          fc.oneof(
            fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
            fc.string(),
          ),
        ),
        fc.constantFrom('POST', 'POST', 'POST', 'GET', 'PUT'),
        async (path, body, signature, timestamp, method) => {
          const response = await fetch(`${stack.gateway.url}${path}`, {
            method,
            headers: {
              'content-type': 'application/json',
              ...(signature ? { 'tl-signature': signature } : {}),
              ...(timestamp ? { 'x-tl-webhook-timestamp': timestamp } : {}),
            },
            body: method === 'GET' ? undefined : body,
          });
          assertSafeAnswer(response.status, await response.text(), `${method} ${path} ${body.slice(0, 200)}`);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('answers anything under /webhooks/ without a 5xx other than 503: any path, method, content type and body', async () => {
    const segment = fc.oneof(
      fc.string({ maxLength: 20 }).map((text) => encodeURIComponent(text)),
      fc.constantFrom('payments', 'data', '..', '%2e%2e', '%00', '', 'data%2Fx'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(segment, { maxLength: 4 }).map((segments) => `/webhooks/${segments.join('/')}`),
        fc.option(fc.string({ maxLength: 40 }).map((text) => `?${encodeURIComponent(text)}=1`)),
        fc.constantFrom('POST', 'GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
        fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', ''),
        fc.oneof(
          anyJson.map((value) => JSON.stringify(value)),
          fc.string({ maxLength: 300 }),
          fc.constant(''),
        ),
        async (path, query, method, contentType, body) => {
          const response = await fetch(`${stack.gateway.url}${path}${query ?? ''}`, {
            method,
            headers: contentType ? { 'content-type': contentType } : {},
            body: method === 'GET' || method === 'OPTIONS' ? undefined : body,
          });
          assertSafeAnswer(response.status, await response.text(), `${method} ${path}`);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('answers anything under /auth/ without a 5xx other than 503: any path, method, query, cookie and body', async () => {
    const param = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('', 'json', 'https://evil.example/', '//evil.example', '/\\evil.example', '%00'));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constantFrom('/auth/login', '/auth/callback', '/auth/logout', '/auth/', '/auth/unknown'),
          fc.string({ maxLength: 20 }).map((text) => `/auth/${encodeURIComponent(text)}`),
        ),
        fc.dictionary(fc.constantFrom('code', 'state', 'error', 'error_description', 'response', 'returnTo', 'redirect', 'scope'), param, { maxKeys: 4 }),
        fc.constantFrom('GET', 'GET', 'POST', 'PUT', 'DELETE'),
        fc.option(
          fc.oneof(fc.string({ maxLength: 60 }), fc.constantFrom(`bankgraph_session=`, 'bankgraph_session=%', 'bankgraph_login=x; bankgraph_session=y')),
        ),
        fc.option(fc.oneof(fc.string({ maxLength: 60 }), fc.constant(`Bearer ${'x'.repeat(40)}`))),
        fc.constantFrom('application/json', 'text/html', '*/*', ''),
        async (path, params, method, cookie, authorization, accept) => {
          const response = await fetch(`${stack.gateway.url}${path}?${new URLSearchParams(params).toString()}`, {
            method,
            redirect: 'manual',
            headers: { ...(cookie ? { cookie } : {}), ...(authorization ? { authorization } : {}), ...(accept ? { accept } : {}) },
            body: method === 'GET' ? undefined : JSON.stringify(params),
          });
          assertSafeAnswer(response.status, await response.text(), `${method} ${path}?${new URLSearchParams(params).toString()}`);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('answers any WebSocket operation with a result or a GraphQL error, on a socket that stays open', async () => {
    // The protocol by hand (graphql-transport-ws), so nothing between the test and the server smooths anything over.
    const socket = new WebSocket(`${stack.gateway.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    const messages: { id?: string; type: string; payload?: unknown }[] = [];
    let closed: number | undefined;
    socket.on('message', (data) => messages.push(JSON.parse(String(data)) as { type: string }));
    socket.on('close', (code) => (closed = code));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${session}` } }));
    await waitFor(() => (messages.some((message) => message.type === 'connection_ack') ? true : undefined), 'connection_ack');

    let counter = 0;
    await fc.assert(
      // Envelopes the protocol allows (variables an object); a malformed envelope is closed with 4400, as graphql-ws specifies.
      fc.asyncProperty(
        mutated(fc.constantFrom(...documents)),
        fc.option(fc.dictionary(fc.constantFrom('first', 'id', 'input', 'name', 'transactionId', 'paymentId'), anyJson)),
        fc.option(fc.string()),
        async (query, vars, operationName) => {
          const id = `op-${(counter += 1)}`;
          socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query, variables: vars, operationName } }));
          // Every operation ends in an error, a complete, or (a running subscription) keeps going: then it is completed here.
          const ended = await waitFor(
            () =>
              messages.find((message) => message.id === id && (message.type === 'error' || message.type === 'complete')) ??
              (closed === undefined ? undefined : null),
            `the end of ${id}`,
            5_000,
          ).catch(() => undefined);
          if (ended === undefined) socket.send(JSON.stringify({ id, type: 'complete' }));
          if (closed !== undefined) throw new Error(`the server closed the socket (${closed}) after ${JSON.stringify(query).slice(0, 300)}`);
          for (const message of messages.filter((candidate) => candidate.id === id)) {
            const errors =
              message.type === 'error'
                ? (message.payload as { extensions?: { code?: unknown } }[])
                : ((message.payload as { errors?: { extensions?: { code?: unknown } }[] } | undefined)?.errors ?? []);
            for (const error of errors) {
              if (!(ERROR_CODES as readonly unknown[]).includes(error.extensions?.code))
                throw new Error(`error code outside ERROR_CODES: ${JSON.stringify(error)}`);
            }
          }
        },
      ),
      { numRuns: 100 },
    );
    socket.close(1000);
  });

  it('takes a session cookie that is not valid percent-encoding for an unknown session, not a 500', async () => {
    const cookie = 'bankgraph_session=%';
    const graphql = await stack.graphql('{ viewer { accounts { id } } }', {}, undefined, { cookie });
    expect(graphql.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const logout = await fetch(`${stack.gateway.url}/auth/logout`, { method: 'POST', headers: { cookie } });
    expect(logout.status).toBeLessThan(500);
  });

  it('routes a request target starting with // as a path, never as a host', async () => {
    for (const target of ['//', '//evil.example/graphql', '//webhooks/payments']) {
      const response = await fetch(`${stack.gateway.url}${target}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(response.status).toBe(404);
    }
  });

  it('is still healthy afterwards, with nothing left rejecting unhandled', async () => {
    expect((await fetch(`${stack.gateway.url}/healthz`)).status).toBe(200);
    const answer = await stack.graphql('{ viewer { accounts { id } } }', {}, session);
    expect(answer.status).toBe(200);
    expect(answer.errors).toBeUndefined();
    expect(unhandled).toEqual([]);
  });
});
