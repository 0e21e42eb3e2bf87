import { APQ_TTL_MS, ApqStore } from '../../src/platform/graphql/persisted/apq-store';
import { createKeyv } from '../../src/platform/store/keyv.factory';

describe('ApqStore', () => {
  let now = 1_000_000;
  const runnable = (text: string): boolean => text.startsWith('query ');

  async function store(quota = { documents: 2, bytes: 1_000 }): Promise<ApqStore> {
    return new ApqStore(await createKeyv<string>('memory', 'apq-test'), runnable, quota, () => now);
  }

  it('keeps only runnable documents, and only for a principal', async () => {
    const apq = await store();
    expect(await apq.register('h-junk', 'junk '.repeat(100), 'user:u1')).toBe(false);
    expect(await apq.get('h-junk')).toBeUndefined();
    expect(await apq.register('h-1', 'query A { __typename }', undefined)).toBe(false);
    expect(await apq.get('h-1')).toBeUndefined();
    expect(await apq.register('h-1', 'query A { __typename }', 'user:u1')).toBe(true);
    expect(await apq.get('h-1')).toBe('query A { __typename }');
  });

  it('caps documents and bytes per principal over a day, counting a known document once', async () => {
    const apq = await store();
    expect(await apq.register('h-1', 'query A { a }', 'user:u1')).toBe(true);
    expect(await apq.register('h-1', 'query A { a }', 'user:u1')).toBe(true);
    expect(await apq.register('h-2', 'query B { b }', 'user:u1')).toBe(true);
    expect(await apq.register('h-3', 'query C { c }', 'user:u1')).toBe(false);
    expect(await apq.get('h-3')).toBeUndefined();
    expect(await apq.register('h-3', 'query C { c }', 'user:u2')).toBe(true);
    const big = `query D { ${'d '.repeat(600)}}`;
    expect(await apq.register('h-4', big, 'ip:10.0.0.1')).toBe(false);
    // A new day, a new allowance.
    now += APQ_TTL_MS;
    expect(await apq.register('h-5', 'query E { e }', 'user:u1')).toBe(true);
  });
});
