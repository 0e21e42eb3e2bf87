import { createHash } from 'node:crypto';
import { buildSchema } from 'graphql';
import { buildManifest } from '../../src/platform/graphql/persisted/build-manifest';
import { parseManifest } from '../../src/platform/graphql/persisted/manifest';

describe('trusted-documents manifests', () => {
  it('reads the client preset and Relay format: id -> document text', () => {
    expect([...parseManifest({ abc: 'query A { __typename }', 'relay-1': 'query B { __typename }' }, 'm.json')]).toEqual([
      ['abc', 'query A { __typename }'],
      ['relay-1', 'query B { __typename }'],
    ]);
  });

  it("looks up the client preset's `sha256:<hex>` keys by the hash a request names", () => {
    const hash = 'AB'.repeat(32);
    expect([...parseManifest({ [`sha256:${hash}`]: 'query A { __typename }' }, 'm.json')]).toEqual([[hash.toLowerCase(), 'query A { __typename }']]);
  });

  it("reads Apollo's persisted query manifest", () => {
    const manifest = {
      format: 'apollo-persisted-query-manifest',
      version: 1,
      operations: [{ id: 'h1', name: 'A', type: 'query', body: 'query A { __typename }' }],
    };
    expect([...parseManifest(manifest, 'm.json')]).toEqual([['h1', 'query A { __typename }']]);
  });

  it('says what is wrong with a bad manifest', () => {
    expect(() => parseManifest(['query A { x }'], 'm.json')).toThrow(
      'PERSISTED_DOCUMENTS_MANIFEST m.json must be a JSON object of document id -> document text',
    );
    expect(() => parseManifest({ a: 3 }, 'm.json')).toThrow('PERSISTED_DOCUMENTS_MANIFEST m.json: the entry "a" is not a document\'s text');
  });
});

describe('npm run persist: buildManifest', () => {
  const schema = buildSchema('type Query { a: Int, b: B } type B { c: Int, d: Int }');

  it('writes one document per operation, with the fragments it uses, under the SHA-256 of its printed text', () => {
    const manifest = buildManifest(
      [
        { name: 'one.graphql', text: 'query A { a }\nquery Both { a b { ...C } }' },
        { name: 'two.graphql', text: 'fragment C on B { c ...D }\nfragment D on B { d }' },
      ],
      schema,
    );
    const documents = Object.entries(manifest);
    expect(documents).toHaveLength(2);
    for (const [hash, text] of documents) expect(hash).toBe(createHash('sha256').update(text).digest('hex'));
    const both = documents.find(([, text]) => text.startsWith('query Both'))![1];
    expect(both).toContain('fragment C on B');
    expect(both).toContain('fragment D on B');
    expect(documents.find(([, text]) => text.startsWith('query A'))![1]).not.toContain('fragment');
  });

  it('refuses an operation the schema would refuse, naming its source', () => {
    expect(() => buildManifest([{ name: 'bad.graphql', text: 'query X { nope }' }], schema)).toThrow(/^bad\.graphql: Cannot query field "nope"/);
    expect(() => buildManifest([{ name: 'lost.graphql', text: 'query X { b { ...Missing } }' }], schema)).toThrow(
      'lost.graphql: fragment Missing is used but defined in none of the sources',
    );
  });
});
