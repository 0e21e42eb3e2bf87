import fc from 'fast-check';
import { JsonSyntaxError, parseDecimalJson } from '../../../src/datasources/decimal-json';
import { LazyProviderList } from '../../../src/datasources/provider-list';

describe('LazyProviderList', () => {
  const body =
    '{ "results" : [ {"id":"a","amount":100.10,"meta":{"results":[1,2]}} , {"id":"b,]}","amount":-2.5} ,{"id":"c\\"","amount":3}, 7, null ], "status":"ok"}';

  it('reads the results array as parseDecimalJson would, page by page', () => {
    const list = LazyProviderList.fromResultsBody<unknown>(body);
    const all = (parseDecimalJson(body) as { results: unknown[] }).results;
    expect(list.length).toBe(5);
    expect(list.slice()).toEqual(all);
    expect(list.slice(1, 3)).toEqual(all.slice(1, 3));
    expect(list.slice(-2)).toEqual(all.slice(-2));
    expect(list.slice(4, 2)).toEqual([]);
    expect([...list]).toEqual(all);
    expect(list.findIndex((item) => (item as { id?: string } | null)?.id === 'c"')).toBe(2);
    expect(list.some((item) => item === '7')).toBe(true);
    expect(JSON.parse(JSON.stringify(list))).toEqual(all);
  });

  it('keeps the digits of amounts', () => {
    const list = LazyProviderList.fromResultsBody<{ amount: string }>(body);
    expect(list.slice(0, 1)[0]!.amount).toBe('100.10');
  });

  it('reads an empty list', () => {
    expect(LazyProviderList.fromResultsBody('{"results":[]}').slice()).toEqual([]);
  });

  it.each([
    '',
    '[]',
    '{"results":{}}',
    '{"other":[1]}',
    '{"results":[1,]}',
    '{"results":[,1]}',
    '{"results":[1}',
    '{"results":["x]}',
    '{"results":[1]} x',
    '{"results":[1]',
  ])('refuses the malformed body %j', (text) => {
    expect(() => LazyProviderList.fromResultsBody(text)).toThrow(JsonSyntaxError);
  });

  it('agrees with parseDecimalJson on any results array', () => {
    const element = fc.oneof(
      fc.jsonValue(),
      fc.record({ id: fc.string(), amount: fc.double({ noNaN: true, noDefaultInfinity: true }), tags: fc.array(fc.string()) }),
    );
    fc.assert(
      fc.property(fc.array(element, { maxLength: 8 }), fc.nat(10), fc.nat(10), (items, a, b) => {
        const text = JSON.stringify({ before: { results: [0] }, results: items, after: 'results' });
        const list = LazyProviderList.fromResultsBody(text);
        const all = (parseDecimalJson(text) as { results: unknown[] }).results;
        expect(list.length).toBe(all.length);
        expect(list.slice(a, b)).toEqual(all.slice(a, b));
      }),
    );
  });
});
