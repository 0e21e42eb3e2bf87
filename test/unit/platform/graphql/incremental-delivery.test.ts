import 'reflect-metadata';
import { GraphQLID, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, parse, specifiedDirectives } from 'graphql';
import { buildAppSchema } from '../../../../src/app/schema';
import { DocumentCache } from '../../../../src/platform/graphql/document-cache';
import {
  asksForIncrementalDelivery,
  executeIncrementally,
  INCREMENTAL_DIRECTIVES,
  type IncrementalPayload,
} from '../../../../src/platform/graphql/incremental-delivery';
import { OperationLimits } from '../../../../src/platform/graphql/operation-limits';

const LIMITS = { maxDepth: 12, maxAliases: 5, maxDirectives: 10, maxTokens: 1000, maxCost: 10_000, maxBodyBytes: 100_000 };

describe('the rules of @defer and @stream', () => {
  let cache: DocumentCache;

  beforeAll(async () => {
    cache = new DocumentCache(await buildAppSchema(), new OperationLimits(LIMITS, false));
  });

  const refusal = (text: string): string | undefined => {
    const checked = cache.check(text);
    return 'errors' in checked ? checked.errors.map((error) => error.message).join(' | ') : undefined;
  };

  it('accepts @defer on fragments and @stream on list fields, with label, if and initialCount', () => {
    expect(
      refusal(`query Q($later: Boolean!) {
        viewer { accounts @stream(initialCount: 1, label: "accounts") { id ... @defer(label: "balance", if: $later) { balance { current } } } }
      }`),
    ).toBeUndefined();
    expect(refusal('fragment Money on Account { balance { current } } query { viewer { accounts { id ...Money @defer } } }')).toBeUndefined();
  });

  it.each([
    ['query { viewer { id @stream } }', /@stream is allowed on list fields only: Viewer\.id is ID!, not a list/],
    ['query { viewer { accounts @stream(initialCount: -1) { id } } }', /initialCount must be 0 or more .* it was -1/],
    ['query Q($l: String) { viewer { accounts { ... @defer(label: $l) { id } } } }', /label must be a literal string, not a variable/],
    [
      'query { viewer { accounts { ... @defer(label: "a") { id } ... @defer(label: "a") { displayName } } } }',
      /@defer\(label: "a"\) is used twice: every @defer and @stream label must be unique/,
    ],
    ['subscription { __typename ... @defer { __typename } }', /@defer is not served in subscriptions/],
  ])('refuses %s, saying which rule', (text, message) => {
    expect(refusal(text)).toMatch(message);
  });

  it('refuses @defer on the root fields of a mutation, which run in order and answer together', () => {
    expect(refusal('mutation { ... @defer { __typename } }')).toMatch(/@defer is not allowed on the root fields of a mutation/);
  });

  it('tells a document that asks for incremental delivery from one that does not, once per document', () => {
    const asks = cache.check('query { viewer { accounts { id ... @defer { balance { current } } } } }');
    const plain = cache.check('query { viewer { accounts { id } } }');
    expect('document' in asks && asksForIncrementalDelivery(asks.document)).toBe(true);
    expect('document' in plain && asksForIncrementalDelivery(plain.document)).toBe(false);
  });
});

describe('the payloads of a deferred operation', () => {
  // Each item's deferred `ready` answers when the test releases it, as a provider answer would come in.
  const release = new Map<string, () => void>();
  const Item = new GraphQLObjectType<{ id: string }>({
    name: 'Item',
    fields: {
      id: { type: new GraphQLNonNull(GraphQLID) },
      ready: { type: GraphQLID, resolve: ({ id }) => new Promise((resolve) => release.set(id, () => resolve(id))) },
    },
  });
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: { items: { type: new GraphQLList(Item), resolve: () => [{ id: 'a' }, { id: 'b' }, { id: 'c' }] } } }),
    directives: [...specifiedDirectives, ...INCREMENTAL_DIRECTIVES],
  });

  it('sends the parts that finish in the same turn of the event loop as one payload, and a later part on its own', async () => {
    const result = await executeIncrementally({ schema, document: parse('{ items { id ... @defer(label: "ready") { ready } } }') }, () => undefined);
    if (!(Symbol.asyncIterator in result)) throw new Error(`one result, not payloads: ${JSON.stringify(result)}`);
    const payloads: IncrementalPayload[] = [];
    for await (const payload of result) {
      payloads.push(payload);
      if (payloads.length === 1) {
        while (release.size < 3) await new Promise(setImmediate);
        // `a` now and `b` in a callback of its own later in the same turn, as two sockets' answers read together.
        release.get('a')!();
        setImmediate(release.get('b')!);
      }
      if (payloads.length === 2) release.get('c')!();
    }
    expect(payloads[0]).toEqual({ data: { items: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] }, hasNext: true });
    expect(payloads.slice(1).map((payload) => (payload.incremental ?? []).map((part) => part.data))).toEqual([
      [{ ready: 'a' }, { ready: 'b' }],
      [{ ready: 'c' }],
    ]);
    expect(payloads.at(-1)?.hasNext).toBe(false);
  });

  it('ends at once, and cancels the operation once, when the client stops reading while a deferred part waits', async () => {
    const cancelled: Error[] = [];
    const result = await executeIncrementally({ schema, document: parse('{ items { id ... @defer { ready } } }') }, (reason) => cancelled.push(reason));
    if (!(Symbol.asyncIterator in result)) throw new Error(`one result, not payloads: ${JSON.stringify(result)}`);
    expect((await result.next()).value).toEqual({ data: { items: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] }, hasNext: true });
    // The deferred parts are never released: only the client leaving ends the payload awaited.
    const awaited = result.next();
    await new Promise(setImmediate);
    await expect(result.return(undefined)).resolves.toEqual({ done: true, value: undefined });
    await expect(awaited).resolves.toEqual({ done: true, value: undefined });
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]).toBeInstanceOf(Error);
  });
});
