import { request } from 'node:http';
import { dataOf } from '../helpers/money';
import { closeHttpStreams, MULTIPART_ACCEPT, streamOverHttp, type HttpStream, type StreamTransport } from '../helpers/http-stream-client';
import { startStack, type Stack } from '../helpers/stack';

/*
 * Requests another page could make a browser send with the session cookie, to the HTTP streams (SSE at
 * /graphql/stream, Apollo's multipart on /graphql): a browser says what made a request in Sec-Fetch-Mode and
 * Sec-Fetch-Site, and a page cannot set either. Sandbox time runs at 1/1000 of real time, so a data task stays
 * running and its subscription answers at once with the task.
 */

const START = 'mutation { startDataTask(input: { resource: ACCOUNTS }) { id } }';
const TASK_UPDATED = 'subscription Task($id: ID!) { dataTaskUpdated(id: $id) { id status } }';
const ALLOWED = 'https://app.example.com';

describe('HTTP streams and requests from other pages', () => {
  let stack: Stack;
  let session: string;
  let id: string;

  beforeAll(async () => {
    stack = await startStack({ env: { SANDBOX_TIME_SCALE: '0.001', ALLOWED_ORIGINS: ALLOWED } });
    session = await stack.signIn('john', 'doe');
    id = dataOf(await stack.graphql<{ startDataTask: { id: string } }>(START, {}, session)).startDataTask.id;
  });

  afterEach(() => closeHttpStreams());

  afterAll(async () => {
    await stack?.close();
  });

  describe.each<StreamTransport>(['sse', 'multipart'])('signed in by the session cookie, over %s', (transport) => {
    /** A multipart GET carries a preflight-forcing header here, so that the rule under test is the one that answers. */
    const open = (method: 'GET' | 'POST', headers: Record<string, string>, token?: string): HttpStream<{ dataTaskUpdated: { id: string } }> =>
      streamOverHttp(
        transport,
        stack.gateway.url,
        TASK_UPDATED,
        { id },
        {
          method,
          token,
          headers: { ...(transport === 'multipart' && method === 'GET' ? { 'apollo-require-preflight': 'true' } : {}), ...headers },
        },
      );
    const cookie = (): string => `bankgraph_session=${session}`;

    /**
     * The head of a stream request as a browser sends it, Sec-Fetch-* included (fetch would replace Sec-Fetch-Mode
     * with its own), and the body when the answer is a refusal; a stream is closed once its head arrived.
     */
    function browserRequest(
      method: 'GET' | 'POST',
      headers: Record<string, string>,
    ): Promise<{ status: number; contentType: string; requestId: string; body?: unknown }> {
      const variables = JSON.stringify({ id });
      const path = transport === 'sse' ? '/graphql/stream' : '/graphql';
      const search = method === 'GET' ? `?${new URLSearchParams({ query: TASK_UPDATED, variables })}` : '';
      const body = method === 'POST' ? JSON.stringify({ query: TASK_UPDATED, variables: { id } }) : undefined;
      return new Promise((resolve, reject) => {
        const sent = request(`${stack.gateway.url}${path}${search}`, {
          method,
          headers: {
            accept: transport === 'sse' ? 'text/event-stream' : MULTIPART_ACCEPT,
            ...(body ? { 'content-type': 'application/json' } : transport === 'multipart' ? { 'apollo-require-preflight': 'true' } : {}),
            ...headers,
          },
        });
        sent.on('error', reject);
        sent.on('response', (response) => {
          const head = {
            status: response.statusCode!,
            contentType: String(response.headers['content-type']),
            requestId: String(response.headers['x-request-id']),
          };
          if (!head.contentType.startsWith('application/json')) {
            response.destroy();
            return resolve(head);
          }
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => resolve({ ...head, body: JSON.parse(text) as unknown }));
        });
        sent.end(body);
      });
    }

    it.each<[string, Record<string, string>]>([
      ['a no-cors GET with no Origin (an <img> or <script> on a same-site page)', { 'sec-fetch-mode': 'no-cors', 'sec-fetch-site': 'same-site' }],
      ['a no-cors request from the gateway’s own origin', { 'sec-fetch-mode': 'no-cors', 'sec-fetch-site': 'same-origin' }],
      ['a cross-site request, even from an origin in ALLOWED_ORIGINS', { 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'cross-site', origin: ALLOWED }],
      ['a cross-site navigation (a link on another site)', { 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'cross-site' }],
      ['a same-site request with no Origin', { 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'same-site' }],
    ])('refuses %s (403, CROSS_SITE_REQUEST), by GET and by POST', async (_name, headers) => {
      for (const method of ['GET', 'POST'] as const) {
        const answer = await browserRequest(method, { cookie: cookie(), ...headers });
        expect([method, answer.status, answer.contentType]).toEqual([method, 403, expect.stringMatching(/^application\/json/)]);
        const { errors } = answer.body as { errors: { message: string; extensions: Record<string, unknown> }[] };
        expect(errors).toHaveLength(1);
        expect(errors[0]).toMatchObject({ extensions: { code: 'FORBIDDEN', reason: 'CROSS_SITE_REQUEST', requestId: answer.requestId } });
        expect(errors[0]!.message).toContain('Session cookie refused');
        expect(errors[0]!.message).toContain('Authorization: Bearer <token>');
      }
    });

    it('serves a browser’s same-origin request and one from an allowed origin of the same site, by GET and by POST', async () => {
      for (const method of ['GET', 'POST'] as const) {
        for (const headers of [
          { 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'same-origin' } as Record<string, string>,
          { 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'none' },
          { 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'same-site', origin: ALLOWED },
        ]) {
          expect([method, headers, (await browserRequest(method, { cookie: cookie(), ...headers })).status]).toEqual([method, headers, 200]);
        }
      }
    });

    it.each<[string, Record<string, string>]>([
      ['the gateway page’s own fetch or EventSource (same-origin, no Origin)', { 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'same-origin' }],
      ['a same-site page in ALLOWED_ORIGINS', { 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'same-site', origin: ALLOWED }],
      ['a client that is not a browser (no Sec-Fetch-* and no Origin)', {}],
    ])('serves %s, by GET and by POST', async (_name, headers) => {
      for (const method of ['GET', 'POST'] as const) {
        const live = open(method, { cookie: cookie(), ...headers });
        expect((await live.next()).data?.dataTaskUpdated.id).toBe(id);
        live.close();
      }
    });

    it('takes a bearer token whatever Sec-Fetch-* and Origin say: no page can read it to send it', async () => {
      const headers = { cookie: cookie(), 'sec-fetch-mode': 'no-cors', 'sec-fetch-site': 'cross-site', origin: 'http://evil.example' };
      for (const method of ['GET', 'POST'] as const) {
        const live = open(method, headers, session);
        expect((await live.next()).data?.dataTaskUpdated.id).toBe(id);
        live.close();
      }
    });
  });

  describe('a multipart GET and CSRF prevention', () => {
    const get = (headers: Record<string, string>): Promise<Response> =>
      fetch(`${stack.gateway.url}/graphql?${new URLSearchParams({ query: TASK_UPDATED, variables: JSON.stringify({ id }) })}`, {
        headers: { accept: MULTIPART_ACCEPT, ...headers },
        signal: AbortSignal.timeout(5_000),
      });

    it.each<[string, Record<string, string>]>([
      ['no content type and no preflight-forcing header', {}],
      ['a content type a form can send', { 'content-type': 'text/plain' }],
      ['an empty apollo-require-preflight', { 'apollo-require-preflight': '' }],
    ])('refuses one with %s before any stream byte, as Apollo refuses a query (400)', async (_name, headers) => {
      for (const credential of [{ cookie: `bankgraph_session=${session}` }, { authorization: `Bearer ${session}` }] as Record<string, string>[]) {
        const response = await get({ ...credential, ...headers });
        expect(response.status).toBe(400);
        expect(response.headers.get('content-type')).toMatch(/^application\/json/);
        const body = (await response.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
        expect(body.errors).toHaveLength(1);
        expect(body.errors[0]!.message).toContain('This operation has been blocked as a potential Cross-Site Request Forgery (CSRF)');
        expect(body.errors[0]!.message).toContain('x-apollo-operation-name, apollo-require-preflight');
        expect(body.errors[0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', requestId: response.headers.get('x-request-id') });
      }
    });

    it('refuses a query sent so with the same words and code as the multipart GET', async () => {
      const response = await fetch(`${stack.gateway.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, {
        headers: { authorization: `Bearer ${session}` },
      });
      const streamed = await get({ authorization: `Bearer ${session}` });
      const [apollo, ours] = (await Promise.all([response.json(), streamed.json()])) as { errors: { message: string; extensions: { code: string } }[] }[];
      expect([ours!.errors[0]!.message, ours!.errors[0]!.extensions.code]).toEqual([apollo!.errors[0]!.message, apollo!.errors[0]!.extensions.code]);
    });

    it.each<Record<string, string>>([{ 'apollo-require-preflight': 'true' }, { 'x-apollo-operation-name': 'Task' }, { 'content-type': 'application/json' }])(
      'streams one with %p',
      async (headers) => {
        const live = streamOverHttp<{ dataTaskUpdated: { id: string } }>(
          'multipart',
          stack.gateway.url,
          TASK_UPDATED,
          { id },
          { method: 'GET', token: session, headers },
        );
        expect((await live.head).status).toBe(200);
        expect((await live.next()).data?.dataTaskUpdated.id).toBe(id);
      },
    );
  });
});
