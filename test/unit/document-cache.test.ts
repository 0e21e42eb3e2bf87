import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { parse, type GraphQLSchema } from 'graphql';
import { buildAppSchema } from '../../src/app/schema';
import { DocumentCache } from '../../src/platform/graphql/document-cache';
import { OperationLimits } from '../../src/platform/graphql/operation-limits';

const LIMITS = { maxDepth: 8, maxAliases: 3, maxDirectives: 10, maxTokens: 200, maxCost: 1000, maxBodyBytes: 100_000 };
/** Apollo keys its document store by a schema hash, a colon and the SHA-256 of the text. */
const apolloKey = (text: string): string => `schemahash:${createHash('sha256').update(text).digest('hex')}`;

describe('DocumentCache: one parse and validation per text for both transports', () => {
  let schema: GraphQLSchema;

  beforeAll(async () => {
    schema = await buildAppSchema();
  });

  it('gives Apollo the document a WebSocket operation checked, and the WebSocket the one Apollo stored', async () => {
    const cache = new DocumentCache(schema, new OperationLimits(LIMITS, false));
    const store = cache.asDocumentStore();
    const checked = cache.check('{ viewer { id } }');
    expect('document' in checked && (await store.get(apolloKey('{ viewer { id } }')))).toBe('document' in checked && checked.document);

    const fromApollo = parse('{ __typename }');
    await store.set(apolloKey('{ __typename }'), fromApollo);
    expect(cache.check('{ __typename }')).toEqual({ document: fromApollo });
    expect((cache.check('{ __typename }') as { document: unknown }).document).toBe(fromApollo);
  });

  it('refuses with the codes Apollo gives: parse (token limit included) and validation, and stores no refused text for Apollo', async () => {
    const cache = new DocumentCache(schema, new OperationLimits(LIMITS, false));
    const tooLong = `{ ${'viewer { id } '.repeat(60)}}`;
    for (const [text, code] of [
      ['{ viewer { id }', 'GRAPHQL_PARSE_FAILED'],
      [tooLong, 'GRAPHQL_PARSE_FAILED'],
      ['{ viewer { nope } }', 'GRAPHQL_VALIDATION_FAILED'],
    ] as const) {
      const checked = cache.check(text);
      expect('errors' in checked && checked.errors[0]?.extensions.code).toBe(code);
      expect(await cache.asDocumentStore().get(apolloKey(text))).toBeUndefined();
    }
  });

  it('refuses a document graphql-js throws on while validating (a root @skip without its if in a subscription), marked as such', () => {
    const cache = new DocumentCache(schema, new OperationLimits(LIMITS, false));
    const checked = cache.check('subscription { payoutUp @skip { id } }');
    expect(checked).toMatchObject({ unvalidatable: true });
    expect('errors' in checked && checked.errors[0]?.message).toMatch(/Argument "if" of required type "Boolean!" was not provided/);
    expect('errors' in checked && checked.errors[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });
});
