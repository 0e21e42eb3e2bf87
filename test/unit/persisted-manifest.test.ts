import { parseManifest } from '../../src/persisted/manifest';

describe('trusted-documents manifests', () => {
  it('reads the client preset and Relay format: id -> document text', () => {
    expect([...parseManifest({ abc: 'query A { __typename }', 'relay-1': 'query B { __typename }' }, 'm.json')]).toEqual([
      ['abc', 'query A { __typename }'],
      ['relay-1', 'query B { __typename }'],
    ]);
  });

  it('reads Apollo\'s persisted query manifest', () => {
    const manifest = { format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: 'h1', name: 'A', type: 'query', body: 'query A { __typename }' }] };
    expect([...parseManifest(manifest, 'm.json')]).toEqual([['h1', 'query A { __typename }']]);
  });

  it('says what is wrong with a bad manifest', () => {
    expect(() => parseManifest(['query A { x }'], 'm.json')).toThrow('PERSISTED_DOCUMENTS_MANIFEST m.json must be a JSON object of document id -> document text');
    expect(() => parseManifest({ a: 3 }, 'm.json')).toThrow('PERSISTED_DOCUMENTS_MANIFEST m.json: the entry "a" is not a document\'s text');
  });
});
