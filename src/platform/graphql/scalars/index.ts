export { DateTimeScalar, isDateTime } from './date-time.scalar';
export { DateScalar, isDate } from './date.scalar';
export { YearMonthScalar, isYearMonth } from './year-month.scalar';
export { DecimalScalar, decimalFromNumber, isDecimalString, type DecimalValue } from './decimal.scalar';
export { MinorUnitsScalar } from './minor-units.scalar';
export { JSONScalar } from './json.scalar';
