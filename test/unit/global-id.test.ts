import fc from 'fast-check';
import { fromGlobalId, globalIdParts, providerIdOf, toGlobalId } from '../../src/platform/graphql/node/global-id';

describe('global ids', () => {
  it('decode to the tag and parts they were made of, whatever characters the parts hold', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z]{1,3}$/), fc.array(fc.string(), { minLength: 1, maxLength: 3 }), (tag, parts) => {
        const id = toGlobalId(tag, ...parts);
        expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
        if (id.length <= 512) expect(fromGlobalId(id)).toEqual({ tag, parts });
      }),
    );
  });

  it('keep the spelling clients already hold: base64url of the UTF-8 text, parts URI-encoded', () => {
    expect(toGlobalId('t', 'a', 'acc-1', 'tx-1')).toBe(Buffer.from('1:t:a:acc-1:tx-1', 'utf8').toString('base64url'));
    expect(toGlobalId('a', 'kontø 1:2')).toBe(Buffer.from('1:a:kont%C3%B8%201%3A2', 'utf8').toString('base64url'));
  });

  it('decode nothing but their canonical spelling', () => {
    const id = toGlobalId('a', 'acc:1/2');
    expect(fromGlobalId(id)).toEqual({ tag: 'a', parts: ['acc:1/2'] });
    for (const other of [
      '',
      'not an id',
      `${id}=`,
      id.toUpperCase(),
      Buffer.from('2:a:x').toString('base64url'),
      Buffer.from('1:a').toString('base64url'),
      Buffer.from('1:A:x').toString('base64url'),
      Buffer.from('1:a:%zz').toString('base64url'),
      Buffer.from('1:a:acc:1/2').toString('base64url'),
      'a'.repeat(513),
    ]) {
      expect(fromGlobalId(other)).toBeUndefined();
    }
  });

  it('let arguments take a provider id or the global id of the same object', () => {
    const transaction = toGlobalId('t', 'a', 'acc-1', 'tx-1');
    expect(globalIdParts(transaction, 't', 3)).toEqual(['a', 'acc-1', 'tx-1']);
    expect(globalIdParts(transaction, 't', 2)).toBeUndefined();
    expect(providerIdOf(toGlobalId('po', 'c5b4a7b8-8d1e-4d7e-9a4a-1d7f2f0a9b10'), 'po')).toBe('c5b4a7b8-8d1e-4d7e-9a4a-1d7f2f0a9b10');
    expect(providerIdOf('c5b4a7b8-8d1e-4d7e-9a4a-1d7f2f0a9b10', 'po')).toBe('c5b4a7b8-8d1e-4d7e-9a4a-1d7f2f0a9b10');
    const card = toGlobalId('c', 'card-1');
    expect(providerIdOf(card, 'a')).toBe(card);
  });
});
