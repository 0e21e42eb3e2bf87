import { createPrivateKey } from 'node:crypto';
import { z } from 'zod';
import { describeBound, DURATION_FORMAT, parseDuration } from './duration';

/**
 * One kind of environment variable each: what it accepts as a zod schema, and the one message that names the
 * variable, says what it accepts and quotes what it got (never for secrets).
 */
export type Setting<T> = z.ZodType<T, string | undefined>;

const got = (value: unknown): string => JSON.stringify(value);

/** `accepts` parses the raw text; any failure becomes the variable's one message. */
function checked<T>(accepts: z.ZodType<T, string>, message: (value: string) => string): z.ZodType<T, string> {
  return z.string().transform((value, ctx) => {
    const result = accepts.safeParse(value);
    if (result.success) return result.data;
    ctx.issues.push({ code: 'custom', message: message(value), input: value });
    return z.NEVER;
  });
}

/** Unset takes the default; set, it must be what `accepts` takes. */
function setting<T>(accepts: z.ZodType<T, string>, fallback: NoInfer<T>): Setting<T> {
  return accepts.optional().transform((value) => (value === undefined ? fallback : value));
}

/** Unset (or blank) means "not used". */
function optional<T>(accepts: z.ZodType<T, string>): Setting<T | undefined> {
  return z.preprocess((value) => (typeof value === 'string' && value.trim() === '' ? undefined : value), accepts.optional()) as Setting<T | undefined>;
}

const INTEGER = z
  .string()
  .trim()
  .regex(/^-?\d+$/)
  .transform(Number);

export function integerOf(name: string, bounds: { min?: number; max?: number } = {}): z.ZodType<number, string> {
  const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = bounds;
  return checked(INTEGER.pipe(z.int().min(min).max(max)), (value) => `${name} must be an integer from ${min} to ${max}; got ${got(value)}`);
}

export const integer = (name: string, fallback: number, bounds: { min?: number; max?: number } = {}): Setting<number> =>
  setting(integerOf(name, bounds), fallback);

export const port = (name: string, fallback: number): Setting<number> => integer(name, fallback, { min: 0, max: 65_535 });

export function number(name: string, fallback: number, bounds: { min: number; max: number } | { minExclusive: number; max: number }): Setting<number> {
  const finite = z
    .string()
    .refine((value) => value.trim() !== '')
    .transform(Number)
    .pipe(z.number().max(bounds.max));
  const lower = 'min' in bounds ? `from ${bounds.min} to` : `greater than ${bounds.minExclusive} and at most`;
  const accepts = 'min' in bounds ? finite.pipe(z.number().min(bounds.min)) : finite.pipe(z.number().gt(bounds.minExclusive));
  return setting(
    checked(accepts, (value) => `${name} must be a number ${lower} ${bounds.max}; got ${got(value)}`),
    fallback,
  );
}

export function oneOfThese<const T extends readonly [string, ...string[]]>(name: string, values: T): z.ZodType<T[number], string> {
  return checked(z.enum(values), (value) => `${name} must be one of ${values.join(', ')}; got ${got(value)}`);
}

export const oneOf = <const T extends readonly [string, ...string[]]>(name: string, values: T, fallback: NoInfer<T[number]>): Setting<T[number]> =>
  setting(oneOfThese(name, values), fallback);

export const flag = (name: string): Setting<boolean> =>
  setting(
    oneOfThese(name, ['true', 'false']).transform((value) => value === 'true'),
    false,
  );

/** The one duration format, bounds in milliseconds. */
export function durationOf(name: string, bounds: { minMs: number; maxMs: number }): z.ZodType<number, string> {
  const accepts = z
    .string()
    .transform((value) => parseDuration(value) ?? Number.NaN)
    .pipe(z.number().min(bounds.minMs).max(bounds.maxMs));
  return checked(
    accepts,
    (value) => `${name} must be ${DURATION_FORMAT}, from ${describeBound(bounds.minMs)} to ${describeBound(bounds.maxMs)}; got ${got(value)}`,
  );
}

/** A duration with its default; the newer variables have no `*_MS` spelling. */
export const durationSetting = (name: string, fallbackMs: number, bounds: { minMs: number; maxMs: number }): Setting<number> =>
  setting(durationOf(name, bounds), fallbackMs);

export const isUrl = (value: string, protocols: readonly string[]): boolean => URL.canParse(value) && protocols.includes(new URL(value).protocol);

const HTTP_URL = z
  .string()
  .refine((value) => isUrl(value, ['http:', 'https:']))
  .transform((value) => value.replace(/\/+$/, ''));

export const urlOf = (name: string): z.ZodType<string, string> => checked(HTTP_URL, (value) => `${name} must be an absolute http(s) URL; got ${got(value)}`);

export const optionalUrl = (name: string): Setting<string | undefined> => optional(urlOf(name));

/** Required with PROVIDER=remote: unset or blank says so, anything else must be what `accepts` takes. */
export function requiredRemote<T>(
  name: string,
  accepts: z.ZodType<T, string> = z.string() as unknown as z.ZodType<T, string>,
): z.ZodType<T, string | undefined> {
  const message = `${name} is required with PROVIDER=remote`;
  return z
    .string({ error: message })
    .refine((value) => value.trim() !== '', { error: message })
    .pipe(accepts);
}

/** A variable that means something only with PROVIDER=remote, refused with the sandbox so it is never silently ignored. */
export const onlyRemote = (name: string): z.ZodType<undefined, string | undefined> =>
  z.undefined({ error: `${name} is only used with PROVIDER=remote; with PROVIDER=sandbox the sandbox provides it` }).optional();

export const urlListOf = (name: string): z.ZodType<string[], string> =>
  checked(
    z
      .string()
      .transform((value) =>
        value
          .split(',')
          .map((part) => part.trim())
          .filter(Boolean),
      )
      .refine((urls) => urls.length > 0 && urls.every((url) => isUrl(url, ['http:', 'https:']))),
    (value) => `${name} must be a comma-separated list of absolute http(s) URLs; got ${got(value)}`,
  );

/**
 * Each entry an origin (scheme, host, port) exactly as browsers send it, since an Origin header is compared with it
 * as a string; a `*` is a valid host character to the URL parser, but here it could only mean a wildcard.
 */
export function originList(name: string, hint = 'origins like https://app.example.com (no path)'): Setting<string[]> {
  const isOrigin = (origin: string): boolean =>
    isUrl(origin, ['http:', 'https:']) && !origin.includes('*') && new URL(origin).origin === origin.replace(/\/$/, '');
  const accepts = z.string().transform((value, ctx) => {
    const origins = value
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean);
    const bad = origins.find((origin) => !isOrigin(origin));
    if (bad === undefined) return origins.map((origin) => new URL(origin).origin);
    ctx.issues.push({ code: 'custom', message: `${name} must be a comma-separated list of ${hint}; got ${got(bad)}`, input: value });
    return z.NEVER;
  });
  return setting(accepts, []);
}

/** Unset means "not used"; set, it is a credential, so a guessable one is refused (and never quoted). */
export const optionalSecret = (name: string): Setting<string | undefined> =>
  checked(z.string().min(16).regex(/^\S+$/), () => `${name} must be at least 16 characters without spaces`).optional();

export const merchantKeysOf = (name: string): z.ZodType<string[], string> =>
  checked(
    z
      .string()
      .transform((value) =>
        value
          .split(',')
          .map((key) => key.trim())
          .filter(Boolean),
      )
      .refine((keys) => keys.length > 0 && keys.every((key) => key.length >= 16 && !/\s/.test(key))),
    () => `${name} must be a comma-separated list of keys, each at least 16 characters without spaces`,
  );

/** ES512 needs P-521; environment files often hold a PEM on one line with literal \n. */
export function privateKeyPemOf(name: string): z.ZodType<string, string> {
  return z
    .string()
    .transform((value) => value.replace(/\\n/g, '\n'))
    .superRefine((pem, ctx) => {
      let key;
      try {
        key = createPrivateKey(pem);
      } catch {
        ctx.addIssue({ code: 'custom', message: `${name} must be a PEM-encoded private key ("-----BEGIN PRIVATE KEY-----...")` });
        return;
      }
      if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'secp521r1') {
        ctx.addIssue({ code: 'custom', message: `${name} must be an EC P-521 private key (ES512 request signing)` });
      }
    });
}

/** sqlite://<path> is a file path (relative, or absolute with sqlite:///); money and identity need a relational store. */
export const storeUrl = (name: string, fallback: string): Setting<string> =>
  setting(
    checked(
      z.string().refine((value) => /^sqlite:\/\/.+/.test(value) || isUrl(value, ['postgres:', 'postgresql:'])),
      (value) => `${name} must be sqlite://<file> (or sqlite://:memory:) or a postgres:// URL; got ${got(value)}`,
    ),
    fallback,
  );

export const memoryOrRedis = (name: string): Setting<string> =>
  setting(
    checked(
      z.string().refine((value) => value === 'memory' || isUrl(value, ['redis:', 'rediss:'])),
      (value) => `${name} must be "memory" or a redis:// URL; got ${got(value)}`,
    ),
    'memory',
  );

/** Characters that mean nothing to Redis's key patterns (SCAN MATCH, PSUBSCRIBE), so a prefix matches only itself. */
export const redisKeyPrefix = (name: string, fallback: string): Setting<string> =>
  setting(
    checked(
      z.string().regex(/^[A-Za-z0-9:._{}/-]{1,64}$/),
      (value) => `${name} must be 1 to 64 letters, digits or any of : . _ - / { } (e.g. bankgraph-eu: or shop-a:bankgraph:); got ${got(value)}`,
    ),
    fallback,
  );

/** 32 bytes, base64 or hex; unset or blank leaves it to the caller (required in production). */
export const encryptionKey = (name: string): Setting<Buffer | undefined> =>
  optional(
    checked(
      z
        .string()
        .transform((value) => (/^[0-9a-f]{64}$/i.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64')))
        .refine((key) => key.length === 32),
      () => `${name} must be 32 bytes, base64 (44 characters) or hex (64 characters)`,
    ),
  );

/** Free text; unset or blank means "not set". */
export const optionalText = (): Setting<string | undefined> => optional(z.string().transform((value) => value.trim()));
