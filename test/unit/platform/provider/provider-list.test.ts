import fc from 'fast-check';
import { JsonSyntaxError, parseDecimalJson } from '../../../../src/platform/provider/decimal-json';
import { LazyProviderList } from '../../../../src/platform/provider/provider-list';
import { ProviderBody } from '../../../../src/platform/provider/provider-body';

/** The text's UTF-8 bytes cut at the given byte offsets, as an answer that arrived in chunks is. */
function inChunks(text: string, cuts: readonly number[]): ProviderBody {
  const bytes = Buffer.from(text, 'utf8');
  const at = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  return new ProviderBody([0, ...at].map((from, k) => bytes.subarray(from, at[k] ?? bytes.length)).filter((chunk) => chunk.length > 0));
}

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

  it('reads the same list however its bytes are cut into chunks, down to one byte each', () => {
    const tricky =
      '{"results":[{"id":"a\\\\","m":"Café №1","note":"q\\"x\\\\\\"y","amount":-100.10,"fee":1.5e+2,"n":[0,-0.25E-3]},-7,true,"s"] ,"after":"results"}';
    const all = (parseDecimalJson(tricky) as { results: unknown[] }).results;
    expect(all).toHaveLength(4);
    const singles = new ProviderBody([...Buffer.from(tricky, 'utf8')].map((byte) => Uint8Array.of(byte)));
    expect(LazyProviderList.fromResultsBody(singles).slice()).toEqual(all);
    for (let cut = 0; cut <= Buffer.byteLength(tricky); cut += 1) {
      for (const second of [cut + 1, cut + 2, cut + 3]) {
        expect(LazyProviderList.fromResultsBody(inChunks(tricky, [cut, second])).slice()).toEqual(all);
      }
    }
  });

  it('refuses a malformed body however it is cut', () => {
    for (const text of ['{"results":["x\\"]}', '{"results":[1]} x', '{"results":[1,]}', '{"results":[01]}', '{"results":[-]}']) {
      for (let cut = 0; cut <= text.length; cut += 1) {
        expect(() => LazyProviderList.fromResultsBody(inChunks(text, [cut])).slice()).toThrow(JsonSyntaxError);
      }
    }
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
      fc.property(fc.array(element, { maxLength: 8 }), fc.nat(10), fc.nat(10), fc.array(fc.nat(), { maxLength: 6 }), (items, a, b, cuts) => {
        const text = JSON.stringify({ before: { results: [0] }, results: items, after: 'results' });
        const list = LazyProviderList.fromResultsBody(inChunks(text, cuts));
        const all = (parseDecimalJson(text) as { results: unknown[] }).results;
        expect(list.length).toBe(all.length);
        expect(list.slice(a, b)).toEqual(all.slice(a, b));
      }),
    );
  });
});

describe('ProviderBody', () => {
  it('decodes any byte range as UTF-8, characters split between chunks included', () => {
    const text = '{"m":"Café №1 😀","n":2}';
    const bytes = Buffer.from(text, 'utf8');
    for (let cut = 0; cut <= bytes.length; cut += 1) {
      const body = inChunks(text, [cut, cut + 2]);
      expect(body.length).toBe(bytes.length);
      expect(body.toString()).toBe(text);
      for (let start = 0; start <= bytes.length; start += 3) {
        expect(body.text(start, bytes.length)).toBe(bytes.subarray(start).toString('utf8'));
      }
    }
  });

  it('tells whitespace from the rest', () => {
    expect(inChunks('{} \n\t', [2, 3]).isBlankFrom(2)).toBe(true);
    expect(inChunks('{} \n x', [2, 4]).isBlankFrom(2)).toBe(false);
    expect(new ProviderBody([]).isBlankFrom(0)).toBe(true);
  });
});
