import 'reflect-metadata';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type SubscribePayload } from 'graphql-ws';
import WebSocket from 'ws';
import { createGateway, type Gateway } from '../../src/app/gateway';
import { deleteRedisKeys, REDIS_URL } from '../helpers/redis';
import { MERCHANT_KEY, startStack, type Stack } from '../helpers/stack';

/*
 * PERSISTED_DOCUMENTS off | allow | only, over HTTP POST, HTTP GET and WebSocket, with a manifest in the formats
 * app toolchains write, and APQ shared through Redis by two instances (Redis must run on 127.0.0.1:6379).
 */

const TYPENAME = 'query Typename { __typename }';
const PROVIDERS = 'query Providers { __type(name: "Provider") { name } }';
const UNLISTED = 'query Unlisted { __schema { queryType { name } } }';
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

type Body = Record<string, unknown>;
interface Answer {
  status: number;
  cacheControl: string | null;
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

async function post(gatewayUrl: string, body: Body, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${gatewayUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${MERCHANT_KEY}`, ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, cacheControl: response.headers.get('cache-control'), ...((await response.json()) as object) };
}

/** The first result of an operation over SSE (graphql-sse's distinct connections mode). */
async function overSse(gatewayUrl: string, method: 'GET' | 'POST', params: Record<string, unknown>): Promise<Pick<Answer, 'data' | 'errors'>> {
  const asText = Object.entries(params).map(([name, value]): [string, string] => [name, typeof value === 'string' ? value : JSON.stringify(value)]);
  const search = method === 'GET' ? `?${new URLSearchParams(asText)}` : '';
  const response = await fetch(`${gatewayUrl}/graphql/stream${search}`, {
    method,
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${MERCHANT_KEY}` },
    ...(method === 'POST' ? { body: JSON.stringify(params) } : {}),
  });
  expect(response.status).toBe(200);
  const next = /event: next\ndata: (.*)\n/.exec(await response.text())?.[1];
  return JSON.parse(next ?? '{}') as Pick<Answer, 'data' | 'errors'>;
}

async function get(gatewayUrl: string, params: Record<string, string>): Promise<Answer> {
  // The header is what Apollo's CSRF prevention wants of a GET; real APQ clients send one too.
  const response = await fetch(`${gatewayUrl}/graphql?${new URLSearchParams(params)}`, {
    headers: { 'apollo-require-preflight': 'true', authorization: `Bearer ${MERCHANT_KEY}` },
  });
  return { status: response.status, cacheControl: response.headers.get('cache-control'), ...((await response.json()) as object) };
}

/** One operation over graphql-ws: its first result, or the errors it was refused with. */
async function overWs(gatewayUrl: string, payload: SubscribePayload & Body, origin?: string): Promise<Omit<Answer, 'status' | 'cacheControl'>> {
  const client = createClient({
    url: `${gatewayUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: origin
      ? class extends WebSocket {
          constructor(url: string, protocols?: string | string[]) {
            super(url, protocols, { origin });
          }
        }
      : WebSocket,
    connectionParams: { authorization: `Bearer ${MERCHANT_KEY}` },
    retryAttempts: 0,
    lazy: true,
  });
  try {
    return await new Promise((resolve, reject) => {
      client.subscribe(payload, {
        next: (result) => resolve(result as Omit<Answer, 'status' | 'cacheControl'>),
        error: (error) => (Array.isArray(error) ? resolve({ errors: error }) : reject(error instanceof Error ? error : new Error(JSON.stringify(error)))),
        complete: () => undefined,
      });
    });
  } finally {
    await client.dispose();
  }
}

const codeOf = (answer: { errors?: { extensions?: Record<string, unknown> }[] }): unknown => answer.errors?.[0]?.extensions?.code;

describe('persisted documents', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bankgraph-persisted-'));
  const manifestPath = join(dir, 'persisted-documents.json');
  // A manifest keyed by the bare SHA-256 hex (as `npm run persist` writes; the client preset's `sha256:` keys are
  // test/clients/typed-operations.test.ts's), plus a Relay-style id.
  writeFileSync(manifestPath, JSON.stringify({ [sha256(TYPENAME)]: TYPENAME, 'relay-providers-1': PROVIDERS }));

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe('PERSISTED_DOCUMENTS=only', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({ env: { PERSISTED_DOCUMENTS: 'only', PERSISTED_DOCUMENTS_MANIFEST: manifestPath } });
    });
    afterAll(async () => stack?.close());

    it('runs a manifest document by sha256Hash, by documentId and by a Relay id, over POST', async () => {
      const byHash = await post(stack.gateway.url, { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(TYPENAME) } } });
      expect(byHash).toMatchObject({ status: 200, data: { __typename: 'Query' } });
      expect(await post(stack.gateway.url, { documentId: `sha256:${sha256(TYPENAME)}` })).toMatchObject({ status: 200, data: { __typename: 'Query' } });
      expect(await post(stack.gateway.url, { documentId: 'relay-providers-1' })).toMatchObject({ status: 200, data: { __type: { name: 'Provider' } } });
    });

    it('refuses a document sent as text, over POST, GET and WebSocket', async () => {
      const posted = await post(stack.gateway.url, { query: TYPENAME });
      expect(posted.status).toBe(400);
      expect(codeOf(posted)).toBe('PERSISTED_DOCUMENT_REQUIRED');
      expect(posted.data).toBeUndefined();
      expect(codeOf(await get(stack.gateway.url, { query: TYPENAME }))).toBe('PERSISTED_DOCUMENT_REQUIRED');
      // Unreadable extensions do not turn the check off.
      expect(codeOf(await get(stack.gateway.url, { query: TYPENAME, extensions: '{not json' }))).toBe('PERSISTED_DOCUMENT_REQUIRED');
      expect(codeOf(await overWs(stack.gateway.url, { query: TYPENAME }))).toBe('PERSISTED_DOCUMENT_REQUIRED');
    });

    it('refuses to learn a document by APQ, even with a matching hash', async () => {
      const taught = await post(stack.gateway.url, { query: UNLISTED, extensions: { persistedQuery: { version: 1, sha256Hash: sha256(UNLISTED) } } });
      expect(codeOf(taught)).toBe('PERSISTED_DOCUMENT_REQUIRED');
      const asked = await post(stack.gateway.url, { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(UNLISTED) } } });
      expect(codeOf(asked)).toBe('PERSISTED_QUERY_NOT_FOUND');
    });

    it('answers an unknown hash with PERSISTED_QUERY_NOT_FOUND, 200 and no caching, and an unknown id the same', async () => {
      const unknown = await post(stack.gateway.url, { extensions: { persistedQuery: { version: 1, sha256Hash: sha256('query Nope { __typename }') } } });
      expect(unknown).toMatchObject({ status: 200, cacheControl: 'private, no-cache, must-revalidate' });
      expect(codeOf(unknown)).toBe('PERSISTED_QUERY_NOT_FOUND');
      expect(codeOf(await post(stack.gateway.url, { documentId: 'no-such-id' }))).toBe('PERSISTED_QUERY_NOT_FOUND');
    });

    it('refuses text that does not hash to the hash it came with', async () => {
      const mismatch = await post(stack.gateway.url, { query: UNLISTED, extensions: { persistedQuery: { version: 1, sha256Hash: sha256(TYPENAME) } } });
      expect(mismatch.status).toBe(400);
      expect(codeOf(mismatch)).toBe('PERSISTED_QUERY_HASH_MISMATCH');
      expect(mismatch.data).toBeUndefined();
    });

    it('runs manifest documents over GET and WebSocket', async () => {
      const hash = sha256(TYPENAME);
      expect(await get(stack.gateway.url, { extensions: JSON.stringify({ persistedQuery: { version: 1, sha256Hash: hash } }) })).toMatchObject({
        status: 200,
        data: { __typename: 'Query' },
      });
      expect(await get(stack.gateway.url, { documentId: 'relay-providers-1' })).toMatchObject({ status: 200, data: { __type: { name: 'Provider' } } });
      expect(await overWs(stack.gateway.url, { query: '', extensions: { persistedQuery: { version: 1, sha256Hash: hash } } })).toEqual({
        data: { __typename: 'Query' },
      });
      expect(await overWs(stack.gateway.url, { query: '', documentId: 'relay-providers-1' })).toEqual({ data: { __type: { name: 'Provider' } } });
      expect(codeOf(await overWs(stack.gateway.url, { query: '', documentId: 'no-such-id' }))).toBe('PERSISTED_QUERY_NOT_FOUND');
    });

    it('runs a manifest document named by documentId or its hash alone over SSE, GET and POST', async () => {
      const providers = { data: { __type: { name: 'Provider' } } };
      expect(await overSse(stack.gateway.url, 'GET', { documentId: 'relay-providers-1' })).toEqual(providers);
      expect(await overSse(stack.gateway.url, 'POST', { documentId: 'relay-providers-1' })).toEqual(providers);
      expect(codeOf(await overSse(stack.gateway.url, 'POST', { documentId: 'no-such-id' }))).toBe('PERSISTED_QUERY_NOT_FOUND');
      const apq = { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(TYPENAME) } } };
      expect(await overSse(stack.gateway.url, 'GET', apq)).toEqual({ data: { __typename: 'Query' } });
      expect(await overSse(stack.gateway.url, 'POST', apq)).toEqual({ data: { __typename: 'Query' } });
    });

    it('says what a malformed hash should look like', async () => {
      const bad = await post(stack.gateway.url, { extensions: { persistedQuery: { version: 1, sha256Hash: 'abc' } } });
      expect(bad.status).toBe(400);
      expect(bad.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
      expect(bad.errors?.[0]?.message).toMatch(/64 hexadecimal/);
    });

    it("does not exempt the gateway's own page outside development", async () => {
      const origin = stack.gateway.url;
      expect(codeOf(await post(stack.gateway.url, { query: TYPENAME }, { origin }))).toBe('PERSISTED_DOCUMENT_REQUIRED');
    });
  });

  describe('PERSISTED_DOCUMENTS=only in development', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({
        env: { NODE_ENV: 'development', LOG_LEVEL: 'silent', PERSISTED_DOCUMENTS: 'only', PERSISTED_DOCUMENTS_MANIFEST: manifestPath },
      });
    });
    afterAll(async () => stack?.close());

    it('lets the playground page send text, over HTTP and WebSocket, and nobody else', async () => {
      const origin = stack.gateway.url;
      expect(await post(stack.gateway.url, { query: UNLISTED }, { origin })).toMatchObject({
        status: 200,
        data: { __schema: { queryType: { name: 'Query' } } },
      });
      expect(await overWs(stack.gateway.url, { query: UNLISTED }, origin)).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
      expect(codeOf(await post(stack.gateway.url, { query: UNLISTED }, { origin: 'https://elsewhere.example' }))).toBe('PERSISTED_DOCUMENT_REQUIRED');
      expect(codeOf(await post(stack.gateway.url, { query: UNLISTED }))).toBe('PERSISTED_DOCUMENT_REQUIRED');
    });
  });

  describe('PERSISTED_DOCUMENTS=off', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack();
    });
    afterAll(async () => stack?.close());

    it('runs text and answers a hash with PERSISTED_QUERY_NOT_SUPPORTED, over POST, GET and WebSocket', async () => {
      expect(await post(stack.gateway.url, { query: TYPENAME })).toMatchObject({ status: 200, data: { __typename: 'Query' } });
      const extensions = { persistedQuery: { version: 1, sha256Hash: sha256(TYPENAME) } };
      const posted = await post(stack.gateway.url, { extensions });
      expect(posted.status).toBe(200);
      expect(codeOf(posted)).toBe('PERSISTED_QUERY_NOT_SUPPORTED');
      expect(codeOf(await get(stack.gateway.url, { extensions: JSON.stringify(extensions) }))).toBe('PERSISTED_QUERY_NOT_SUPPORTED');
      expect(codeOf(await overWs(stack.gateway.url, { query: '', extensions }))).toBe('PERSISTED_QUERY_NOT_SUPPORTED');
    });
  });

  describe('PERSISTED_DOCUMENTS=allow: what APQ stores', () => {
    let stack: Stack;

    beforeAll(async () => {
      stack = await startStack({ env: { PERSISTED_DOCUMENTS: 'allow', PERSISTED_DOCUMENTS_APQ_MAX_DOCUMENTS: '2' } });
    });
    afterAll(async () => stack?.close());

    const apq = (text: string): Body => ({ persistedQuery: { version: 1, sha256Hash: sha256(text) } });

    it('stores only documents that parse and validate: junk and invalid operations are answered, never kept', async () => {
      const junk = `${'x'.repeat(90 * 1024)} ${randomUUID()}`;
      const refused = await post(stack.gateway.url, { query: junk, extensions: apq(junk) });
      expect(refused.status).toBe(400);
      expect(refused.errors?.[0]?.message).toMatch(/^Syntax Error/);
      expect(codeOf(await post(stack.gateway.url, { extensions: apq(junk) }))).toBe('PERSISTED_QUERY_NOT_FOUND');
      const invalid = `query Invalid${randomUUID().replace(/-/g, '')} { noSuchField }`;
      const unknownField = await post(stack.gateway.url, { query: invalid, extensions: apq(invalid) });
      expect(unknownField.status).toBe(400);
      expect(unknownField.errors?.[0]?.message).toMatch(/Cannot query field "noSuchField"/);
      expect(codeOf(await post(stack.gateway.url, { extensions: apq(invalid) }))).toBe('PERSISTED_QUERY_NOT_FOUND');
    });

    it('stores at most its quota for one principal; past it the text still runs, and other principals have their own', async () => {
      const documents = [1, 2, 3].map((n) => `query Quota${n}${randomUUID().replace(/-/g, '')} { __typename }`);
      for (const document of documents) {
        expect(await post(stack.gateway.url, { query: document, extensions: apq(document) })).toMatchObject({ status: 200, data: { __typename: 'Query' } });
      }
      expect(await post(stack.gateway.url, { extensions: apq(documents[0]!) })).toMatchObject({ status: 200, data: { __typename: 'Query' } });
      expect(await post(stack.gateway.url, { extensions: apq(documents[1]!) })).toMatchObject({ status: 200, data: { __typename: 'Query' } });
      expect(codeOf(await post(stack.gateway.url, { extensions: apq(documents[2]!) }))).toBe('PERSISTED_QUERY_NOT_FOUND');
      // An anonymous client (counted by its address) registers the third under its own quota.
      const anonymous = { authorization: '' };
      expect(await post(stack.gateway.url, { query: documents[2]!, extensions: apq(documents[2]!) }, anonymous)).toMatchObject({ status: 200 });
      expect(await post(stack.gateway.url, { extensions: apq(documents[2]!) })).toMatchObject({ status: 200, data: { __typename: 'Query' } });
    });
  });

  describe('PERSISTED_DOCUMENTS=allow with APQ in Redis, two instances', () => {
    const prefix = `bankgraph-test-${randomUUID().slice(0, 8)}:`;
    let stack: Stack;
    let second: Gateway | undefined;

    beforeAll(async () => {
      const env = { PERSISTED_DOCUMENTS: 'allow', PERSISTED_DOCUMENTS_MANIFEST: manifestPath, CACHE_URL: REDIS_URL, REDIS_KEY_PREFIX: prefix };
      try {
        stack = await startStack({ env });
      } catch (error) {
        throw new Error(`the APQ tests need Redis at ${REDIS_URL} (redis-server --daemonize yes --port 6379 --save ""): ${String(error)}`, { cause: error });
      }
      second = await createGateway(stack.config);
    });
    afterAll(async () => {
      await second?.close();
      await stack?.close();
      await deleteRedisKeys(prefix);
    });

    it('runs text, manifest hashes and ids', async () => {
      expect(await post(stack.gateway.url, { query: UNLISTED })).toMatchObject({ status: 200, data: { __schema: { queryType: { name: 'Query' } } } });
      expect(await post(stack.gateway.url, { documentId: 'relay-providers-1' })).toMatchObject({ status: 200, data: { __type: { name: 'Provider' } } });
    });

    it("follows Apollo's protocol: unknown hash, then hash with text, then the hash alone works on the other instance too", async () => {
      const document = `query Learned${randomUUID().replace(/-/g, '')} { __typename }`;
      const extensions = { persistedQuery: { version: 1, sha256Hash: sha256(document) } };
      expect(codeOf(await post(stack.gateway.url, { extensions }))).toBe('PERSISTED_QUERY_NOT_FOUND');
      expect(await post(stack.gateway.url, { query: document, extensions })).toMatchObject({ status: 200, data: { __typename: 'Query' } });
      expect(await post(second!.url, { extensions })).toMatchObject({ status: 200, data: { __typename: 'Query' } });
      expect(await get(second!.url, { extensions: JSON.stringify(extensions) })).toMatchObject({ status: 200, data: { __typename: 'Query' } });
      expect(await overWs(second!.url, { query: '', extensions })).toEqual({ data: { __typename: 'Query' } });
    });

    it('never learns text under a hash it does not have', async () => {
      const extensions = { persistedQuery: { version: 1, sha256Hash: sha256('query Honest { __typename }') } };
      const taught = await post(stack.gateway.url, { query: UNLISTED, extensions });
      expect(codeOf(taught)).toBe('PERSISTED_QUERY_HASH_MISMATCH');
      expect(codeOf(await post(second!.url, { extensions }))).toBe('PERSISTED_QUERY_NOT_FOUND');
    });
  });
});
