import { shown } from '../platform/validation/text-rules';

/**
 * IBAN lengths of the ISO 13616 registry for the countries payouts are most likely to reach. A country missing here
 * is still checked for shape (country, check digits, 11 to 30 letters or digits) and checksum; a country listed here
 * must also have its exact length, which catches a dropped or doubled digit that mod-97 might let through.
 */
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24,
  AT: 20,
  BE: 16,
  BG: 22,
  CH: 21,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  EE: 20,
  ES: 24,
  FI: 18,
  FR: 27,
  GB: 22,
  GI: 23,
  GR: 27,
  HR: 21,
  HU: 28,
  IE: 22,
  IS: 26,
  IT: 27,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MT: 31,
  NL: 18,
  NO: 15,
  PL: 28,
  PT: 25,
  RO: 24,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
};

/** How IBANs are kept and compared everywhere: no spaces, upper case (the "electronic format" of ISO 13616). */
export function normaliseIban(iban: string): string {
  return iban.replace(/\s+/g, '').toUpperCase();
}

/** Undefined when `iban` (already normalised) is a valid IBAN; otherwise what is wrong with it, for the client. */
export function ibanProblem(iban: string): string | undefined {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) {
    return `must be an IBAN: a 2-letter country code, 2 check digits and 11 to 30 letters or digits (spaces are ignored); got ${shown(iban)}`;
  }
  const country = iban.slice(0, 2);
  const expected = IBAN_LENGTHS[country];
  if (expected !== undefined && iban.length !== expected) {
    return `must have ${expected} characters for a ${country} IBAN; got ${iban.length}`;
  }
  if (mod97(iban.slice(4) + iban.slice(0, 4)) !== 1) {
    return `is not a valid IBAN: its check digits do not match (ISO 13616 mod-97); check for a mistyped character in ${shown(iban)}`;
  }
  return undefined;
}

/** Letters count as 10..35; the remainder is taken digit by digit so the number never outgrows a double. */
function mod97(text: string): number {
  let remainder = 0;
  for (const char of text) {
    const code = char.charCodeAt(0);
    const digits = code >= 65 ? String(code - 55) : char;
    for (const digit of digits) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder;
}
