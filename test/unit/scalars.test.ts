import { GraphQLError, parseValue, type GraphQLScalarType } from 'graphql';
import { DateTimeScalar } from '../../src/platform/graphql/scalars/date-time.scalar';
import { DateScalar } from '../../src/platform/graphql/scalars/date.scalar';
import { decimalFromNumber, DecimalScalar } from '../../src/platform/graphql/scalars/decimal.scalar';
import { JSONScalar } from '../../src/platform/graphql/scalars/json.scalar';
import { MinorUnitsScalar } from '../../src/platform/graphql/scalars/minor-units.scalar';
import { YearMonthScalar } from '../../src/platform/graphql/scalars/year-month.scalar';

/** Parses `source` as a GraphQL literal (as it would appear in a query) through the scalar. */
function literal(scalar: GraphQLScalarType, source: string, variables?: Record<string, unknown>): unknown {
  return scalar.parseLiteral(parseValue(source), variables);
}

function errorOf(run: () => unknown): GraphQLError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GraphQLError);
    return error as GraphQLError;
  }
  throw new Error('expected an error, got none');
}

function expectBadInput(run: () => unknown, message: string): void {
  const error = errorOf(run);
  expect(error.message).toBe(message);
  expect(error.extensions.code).toBe('BAD_USER_INPUT');
}

describe('the scalars carry the descriptions of the contract', () => {
  it.each([
    [
      DateTimeScalar,
      'DateTime',
      'ISO 8601 date-time, passed through exactly as the provider sent it: fractional digits and UTC offset (or its absence) are kept.',
    ],
    [DateScalar, 'Date', 'A calendar date, YYYY-MM-DD.'],
    [YearMonthScalar, 'YearMonth', 'A year and month, YYYY-MM.'],
    [DecimalScalar, 'Decimal', 'An exact decimal amount, serialised as a string such as "-2.99".'],
    [
      MinorUnitsScalar,
      'MinorUnits',
      "An integer amount in the currency's smallest unit (pence for GBP). Any safe integer up to 2^53-1; GraphQL's Int is only 32-bit.",
    ],
    [JSONScalar, 'JSON', 'Any JSON value.'],
  ])('%s', (scalar, name, description) => {
    expect(scalar.name).toBe(name);
    expect(scalar.description).toBe(description);
  });
});

describe('Decimal', () => {
  it.each([
    [-2.99, '-2.99'],
    [0.1, '0.1'],
    [1234.5, '1234.5'],
    [10, '10'],
    [-0.01, '-0.01'],
    [0, '0'],
    [-0, '0'],
    [0.30000000000000004, '0.30000000000000004'],
    [123456789.12, '123456789.12'],
    [1e21, '1000000000000000000000'],
    [-1.5e22, '-15000000000000000000000'],
    [1.2345e25, '12345000000000000000000000'],
    [1e-7, '0.0000001'],
    [-1.5e-7, '-0.00000015'],
    [1.23e-10, '0.000000000123'],
  ])('serialises the number %p as %p', (value, expected) => {
    expect(DecimalScalar.serialize(value)).toBe(expected);
  });

  it("gives back the provider's text for numbers that came through JSON.parse", () => {
    for (const text of ['-2.99', '0.07', '19.99', '1000000.01', '-123.45', '0.000001', '99999999999.99']) {
      expect(DecimalScalar.serialize(JSON.parse(text))).toBe(text);
    }
  });

  it('never writes an exponent, for any finite double', () => {
    for (const value of [Number.MAX_VALUE, Number.MIN_VALUE, -Number.MAX_VALUE, 5e-324, 1e300, 2 ** 70]) {
      const text = decimalFromNumber(value);
      expect(text).toMatch(/^-?\d+(\.\d+)?$/);
      expect(Number(text)).toBe(value);
    }
  });

  it('passes decimal strings through verbatim, trailing zeros included', () => {
    expect(DecimalScalar.serialize('-2.99')).toBe('-2.99');
    expect(DecimalScalar.serialize('10.50')).toBe('10.50');
    expect(DecimalScalar.serialize('12345678901234567890.123456789')).toBe('12345678901234567890.123456789');
  });

  it('serialises a bigint', () => {
    expect(DecimalScalar.serialize(12345678901234567890n)).toBe('12345678901234567890');
  });

  it.each([[Number.NaN], [Number.POSITIVE_INFINITY], ['abc'], ['1e5'], [''], [true], [{}]])('refuses to serialise %p', (value) => {
    const error = errorOf(() => DecimalScalar.serialize(value));
    expect(error.message).toMatch(/^Decimal cannot represent .+: expected a finite number or a decimal string$/);
    expect(error.extensions.code).toBe('INTERNAL_SERVER_ERROR');
  });

  it('parses decimal strings, literal or variable, verbatim', () => {
    expect(literal(DecimalScalar, '"-2.99"')).toBe('-2.99');
    expect(literal(DecimalScalar, '"10.50"')).toBe('10.50');
    expect(DecimalScalar.parseValue('-0.01')).toBe('-0.01');
    expect(DecimalScalar.parseValue('10')).toBe('10');
  });

  const decimalAccepts = 'Decimal must be a string of decimal digits with an optional minus sign and fraction, such as "-2.99"';

  it('rejects numbers and malformed strings, saying what it got', () => {
    expectBadInput(() => literal(DecimalScalar, '-2.99'), `${decimalAccepts}; got -2.99`);
    expectBadInput(() => literal(DecimalScalar, '"1e5"'), `${decimalAccepts}; got "1e5"`);
    expectBadInput(() => literal(DecimalScalar, '"2,99"'), `${decimalAccepts}; got "2,99"`);
    expectBadInput(() => DecimalScalar.parseValue(-2.99), `${decimalAccepts}; got -2.99`);
    expectBadInput(() => DecimalScalar.parseValue('.5'), `${decimalAccepts}; got ".5"`);
    expectBadInput(() => DecimalScalar.parseValue('+1'), `${decimalAccepts}; got "+1"`);
    expectBadInput(() => DecimalScalar.parseValue(null), `${decimalAccepts}; got null`);
  });
});

describe('DateTime', () => {
  it.each([
    '2026-01-31T09:15:00',
    '2026-01-31T09:15:00Z',
    '2026-01-31T09:15:00.123Z',
    '2026-01-31T09:15:00.123456+00:00',
    '2026-01-31T09:15:00.1234567+01:00',
    '2018-03-06T00:00:00',
    '2023-03-15T12:00:00.5-05:30',
    '2026-01-31T09:15Z',
    '2026-01-31T09:15:00+0100',
    '2016-12-31T23:59:60Z',
    '2024-02-29T10:00:00-0530',
    '2026-01-31T09:15:00,5+01',
  ])('serialises and parses %s verbatim', (text) => {
    expect(DateTimeScalar.serialize(text)).toBe(text);
    expect(DateTimeScalar.parseValue(text)).toBe(text);
    expect(literal(DateTimeScalar, JSON.stringify(text))).toBe(text);
  });

  it('serialises a JS Date, for timestamps the gateway makes itself', () => {
    expect(DateTimeScalar.serialize(new Date(Date.UTC(2026, 0, 31, 9, 15)))).toBe('2026-01-31T09:15:00.000Z');
  });

  it.each([['2026-01-31'], ['2026-01-31 09:15:00'], ['not a date'], [1_700_000_000_000], [new Date(Number.NaN)]])('refuses to serialise %p', (value) => {
    const error = errorOf(() => DateTimeScalar.serialize(value));
    expect(error.message).toMatch(/^DateTime cannot represent .+: expected an ISO 8601 date-time string$/);
    expect(error.extensions.code).toBe('INTERNAL_SERVER_ERROR');
  });

  const accepts =
    'DateTime must be an ISO 8601 date-time string such as "2026-01-31T09:15:00Z" or "2026-01-31T09:15:00.123+01:00" ' +
    '(seconds, fraction and UTC offset optional)';

  it.each([
    ['"2026-02-30T10:00:00Z"', '"2026-02-30T10:00:00Z"'],
    ['"2026-01-31T24:00:00Z"', '"2026-01-31T24:00:00Z"'],
    ['"2026-01-31T10:60:00Z"', '"2026-01-31T10:60:00Z"'],
    ['"2026-01-31T10:00:00+25:00"', '"2026-01-31T10:00:00+25:00"'],
    ['"2026-01-31T10:00:00+01:60"', '"2026-01-31T10:00:00+01:60"'],
    ['"2026-01-31T10:00:00-0160"', '"2026-01-31T10:00:00-0160"'],
    ['"2026-01-31T10:00:61Z"', '"2026-01-31T10:00:61Z"'],
    ['"2025-02-29T10:00:00Z"', '"2025-02-29T10:00:00Z"'],
    ['"2026-01-31"', '"2026-01-31"'],
    ['"2026-01-31T10:00:00.Z"', '"2026-01-31T10:00:00.Z"'],
    ['1700000000', '1700000000'],
  ])('rejects the literal %s', (source, shown) => {
    expectBadInput(() => literal(DateTimeScalar, source), `${accepts}; got ${shown}`);
  });

  it('rejects variables that are not date-time strings', () => {
    expectBadInput(() => DateTimeScalar.parseValue('yesterday'), `${accepts}; got "yesterday"`);
    expectBadInput(() => DateTimeScalar.parseValue(1_700_000_000), `${accepts}; got 1700000000`);
  });
});

describe('Date', () => {
  it('serialises and parses calendar dates verbatim', () => {
    expect(DateScalar.serialize('2026-01-31')).toBe('2026-01-31');
    expect(DateScalar.parseValue('2024-02-29')).toBe('2024-02-29');
    expect(literal(DateScalar, '"2000-02-29"')).toBe('2000-02-29');
  });

  const accepts = 'Date must be a calendar date in the form YYYY-MM-DD';

  it.each([
    ['"2026-13-01"'],
    ['"2026-02-30"'],
    ['"2025-02-29"'],
    ['"1900-02-29"'],
    ['"2026-04-31"'],
    ['"2026-00-10"'],
    ['"2026-01-00"'],
    ['"2026-1-5"'],
    ['"2026-01-31T00:00:00Z"'],
    ['20260131'],
    ['null'],
  ])('rejects the literal %s', (source) => {
    expectBadInput(() => literal(DateScalar, source), `${accepts}; got ${source}`);
  });

  it('rejects variables that are not calendar dates', () => {
    expectBadInput(() => DateScalar.parseValue('2026-13-01'), `${accepts}; got "2026-13-01"`);
    expectBadInput(() => DateScalar.parseValue({ year: 2026 }), `${accepts}; got {"year":2026}`);
  });

  it('refuses to serialise anything but a calendar date', () => {
    expect(errorOf(() => DateScalar.serialize('2026-02-30')).message).toBe('Date cannot represent "2026-02-30": expected a calendar date string YYYY-MM-DD');
  });
});

describe('YearMonth', () => {
  it('serialises and parses YYYY-MM verbatim', () => {
    expect(YearMonthScalar.serialize('2026-01')).toBe('2026-01');
    expect(YearMonthScalar.parseValue('2026-12')).toBe('2026-12');
    expect(literal(YearMonthScalar, '"1999-09"')).toBe('1999-09');
  });

  const accepts = 'YearMonth must be a year and month in the form YYYY-MM, month 01 to 12';

  it.each([['"2026-13"'], ['"2026-00"'], ['"2026-1"'], ['"2026-01-01"'], ['202601']])('rejects the literal %s', (source) => {
    expectBadInput(() => literal(YearMonthScalar, source), `${accepts}; got ${source}`);
  });

  it('rejects variables that are not YYYY-MM', () => {
    expectBadInput(() => YearMonthScalar.parseValue('01/2026'), `${accepts}; got "01/2026"`);
  });

  it('refuses to serialise anything else', () => {
    expect(errorOf(() => YearMonthScalar.serialize('2026-13')).message).toBe('YearMonth cannot represent "2026-13": expected a string YYYY-MM');
  });
});

describe('MinorUnits', () => {
  const max = Number.MAX_SAFE_INTEGER;

  it('serialises safe integers as JSON numbers', () => {
    expect(MinorUnitsScalar.serialize(1999)).toBe(1999);
    expect(MinorUnitsScalar.serialize(max)).toBe(max);
    expect(MinorUnitsScalar.serialize(-250)).toBe(-250);
    expect(MinorUnitsScalar.serialize(BigInt(max))).toBe(max);
    expect(JSON.stringify({ amount: MinorUnitsScalar.serialize(max) })).toBe('{"amount":9007199254740991}');
  });

  it.each([[1.5], [max + 1], [2 ** 60], ['100'], [Number.NaN], [BigInt(max) + 1n]])('refuses to serialise %p', (value) => {
    const error = errorOf(() => MinorUnitsScalar.serialize(value));
    expect(error.message).toMatch(/^MinorUnits cannot represent .+: expected a safe integer$/);
  });

  it('parses Int literals beyond 32 bits, up to 2^53-1', () => {
    expect(literal(MinorUnitsScalar, '100')).toBe(100);
    expect(literal(MinorUnitsScalar, '2147483648')).toBe(2_147_483_648);
    expect(literal(MinorUnitsScalar, '9007199254740991')).toBe(max);
    expect(literal(MinorUnitsScalar, '-9007199254740991')).toBe(-max);
    expect(Object.is(literal(MinorUnitsScalar, '-0'), 0)).toBe(true);
  });

  it('parses safe integer variables', () => {
    expect(MinorUnitsScalar.parseValue(1)).toBe(1);
    expect(MinorUnitsScalar.parseValue(max)).toBe(max);
  });

  const accepts =
    'MinorUnits must be a whole number of minor units, a safe integer from -9007199254740991 to 9007199254740991, ' +
    'given as a number (not a string, no fraction)';

  it.each([['9007199254740992'], ['9007199254740993'], ['-9007199254740992'], ['99999999999999999999'], ['1.5'], ['100.0'], ['1e3'], ['"100"'], ['true']])(
    'rejects the literal %s',
    (source) => {
      expectBadInput(() => literal(MinorUnitsScalar, source), `${accepts}; got ${source}`);
    },
  );

  it('rejects variables that are floats, strings or unsafe integers', () => {
    expectBadInput(() => MinorUnitsScalar.parseValue(1.5), `${accepts}; got 1.5`);
    expectBadInput(() => MinorUnitsScalar.parseValue('100'), `${accepts}; got "100"`);
    // What JSON.parse makes of 9007199254740993: the nearest double, 2^53, which is no longer exact.
    expectBadInput(() => MinorUnitsScalar.parseValue(JSON.parse('9007199254740993')), `${accepts}; got 9007199254740992`);
    expectBadInput(() => MinorUnitsScalar.parseValue(Number.POSITIVE_INFINITY), `${accepts}; got Infinity`);
  });
});

describe('JSON', () => {
  it('serialises any value as it is', () => {
    const raw = { bank_transaction_id: 'abc', nested: [1, 'two', null, { deep: true }] };
    expect(JSONScalar.serialize(raw)).toBe(raw);
    expect(JSONScalar.serialize('text')).toBe('text');
    expect(JSONScalar.serialize(12.5)).toBe(12.5);
  });

  it('parses any literal, with variables inside', () => {
    expect(literal(JSONScalar, '{a: 1, b: [true, "x", null, 2.5], c: {d: $v}}', { v: 'var' })).toEqual({
      a: 1,
      b: [true, 'x', null, 2.5],
      c: { d: 'var' },
    });
    expect(literal(JSONScalar, '"plain"')).toBe('plain');
    expect(literal(JSONScalar, 'ENUM_LIKE')).toBe('ENUM_LIKE');
  });

  it('parses any variable value', () => {
    expect(JSONScalar.parseValue([1, { a: 'b' }])).toEqual([1, { a: 'b' }]);
  });
});

describe('error messages', () => {
  it('shorten what was received when it is long', () => {
    const long = 'x'.repeat(500);
    const error = errorOf(() => DateScalar.parseValue(long));
    expect(error.message.length).toBeLessThan(200);
    expect(error.message).toMatch(/…$/);
  });
});
