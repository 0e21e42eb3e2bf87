import { JsonSyntaxError, parseDecimalJson } from '../../../../src/platform/provider/decimal-json';

describe('parseDecimalJson', () => {
  it('keeps every number as its source digits', () => {
    const parsed = parseDecimalJson('{"amount":-2.99,"balance":100.10,"limit":1000,"zero":0,"tiny":0.000001}');
    expect(parsed).toEqual({ amount: '-2.99', balance: '100.10', limit: '1000', zero: '0', tiny: '0.000001' });
  });

  it('keeps digits a float would lose', () => {
    const parsed = parseDecimalJson('[12345678901234567890.123456789]') as string[];
    expect(parsed[0]).toBe('12345678901234567890.123456789');
  });

  it.each([
    ['1.5E2', '150'],
    ['1e-3', '0.001'],
    ['-0.5e1', '-5'],
    ['100e-2', '1.00'],
    ['2.50e+1', '25.0'],
  ])('writes exponent literal %s out as %s', (literal, expected) => {
    expect(parseDecimalJson(literal)).toBe(expected);
  });

  it('parses everything else as JSON.parse does', () => {
    const text = '{"s":"a\\"b\\u00e9\\n","t":true,"f":false,"n":null,"a":[{"x":[]}],"o":{}}';
    expect(parseDecimalJson(text)).toEqual(JSON.parse(text));
  });

  it('keeps a __proto__ key as data, not as the prototype', () => {
    const parsed = parseDecimalJson('{"__proto__":{"polluted":"yes"}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each(['', '{', '[1,]', '{"a":1,}', '01', '1.', '-', '"\\x"', 'tru', '{"a" 1}', '[1] 2', '"\u0001"', '+1', 'NaN'])('rejects malformed %j', (text) => {
    expect(() => parseDecimalJson(text)).toThrow(JsonSyntaxError);
  });

  it('survives pathological nesting without overflowing the stack', () => {
    expect(() => parseDecimalJson('['.repeat(100_000))).toThrow(JsonSyntaxError);
    expect(parseDecimalJson(`${'['.repeat(10_000)}1${']'.repeat(10_000)}`)).toBeInstanceOf(Array);
  });

  it('finds the end of strings that end in escaped backslashes or hold escaped quotes', () => {
    expect(parseDecimalJson('["a\\\\",1,"b\\"2\\"",3]')).toEqual(['a\\', '1', 'b"2"', '3']);
  });

  it('leaves digits inside strings alone', () => {
    expect(parseDecimalJson('{"ref":"INV-0012 \\"42\\" 1e3","n":7}')).toEqual({ ref: 'INV-0012 "42" 1e3', n: '7' });
  });
});
