import pino, { type Logger } from 'pino';
import { clientRequestIdOfLine } from './client-request-id';
import { activeTraceIds } from './trace-ids';

/**
 * Structured JSON logs. Everything logged passes through `sanitizeForLog` before it is written: values under
 * secret-sounding keys (tokens, keys, secrets, passwords, cookies, signatures, IBANs) are removed at any depth,
 * and every string — keys included, messages, error messages and stacks, provider bodies — has bearer tokens, JWS/JWT, PEM keys,
 * secret URL parts and long opaque tokens blanked and IBANs masked, because provider error bodies and URLs can
 * quote them back.
 */

/**
 * Keys whose values are credentials, card data or personal account numbers wherever they appear. Matched on the
 * key's normalised form (lower case, `-` and `_` removed), so `X-Api-Key`, `client-secret`, `clientSecret` and
 * `CLIENT_SECRET` are one key. `pin`, `otp`, `pan` and `cvv` are whole keys only: `spinner` or `option` are not.
 */
const SECRET_KEY =
  /^(authorization|proxyauthorization|cookie|setcookie|password|passwd|passphrase|.*secret|.*tokens?|.*apikey|merchantkeys?|privatekey(pem)?|signingkey|codeverifier|.*signature|jws|connectionparams|.*iban|loginbinding|.*credentials?|pan|cardpan|cardnumber|cardno|primaryaccountnumber|cvv2?|cvc2?|csc|cardsecuritycode|securitycode|pin|pincode|cardpin|otp|otpcode|totp|onetimepassword|onetimecode)$/;

function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key.toLowerCase().replace(/[-_]/g, ''));
}

const REDACTED = '[redacted]';
/** A configured secret shorter than this is not masked literally: it would blank ordinary words. */
const MIN_LITERAL_LENGTH = 8;
/** The values a logger masks literally (see maskLiterallyIn); children of a pino logger inherit it by prototype. */
const LITERAL_SECRETS = Symbol('bankgraph.literalSecrets');
const TRACE_ID_KEY = /^(traceId|spanId)$/;
const MAX_DEPTH = 10;
const MAX_ARRAY_ITEMS = 100;

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const literals: string[] = [];
  const logger = pino(
    {
      level,
      base: { service: 'bankgraph' },
      // The trace of the request being served, next to its requestId, so a log line leads to its trace and back;
      // and the client's own id for the request, when it sent one.
      mixin: (line, _level, self) => {
        const client = clientRequestIdOfLine(line, () => self.bindings());
        return client === undefined ? (activeTraceIds() ?? {}) : { ...activeTraceIds(), clientRequestId: client };
      },
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => sanitizeForLog(object, literals) as Record<string, unknown>,
      },
      // Errors are turned into plain objects by sanitizeForLog; pino's own serializer would re-type them as Object.
      serializers: { err: (value: unknown) => value },
      hooks: {
        logMethod(args, method) {
          method.apply(this, args.map((arg) => (typeof arg === 'string' ? maskSecretsInText(arg, literals) : arg)) as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
  Object.defineProperty(logger, LITERAL_SECRETS, { value: literals });
  return logger;
}

/**
 * Values this logger (and its children) must never write, wherever they turn up in text: the configured merchant
 * keys, which the opaque-token rule misses when they are short or of letters only. A logger not made by
 * createLogger is left as it is.
 */
export function maskLiterallyIn(logger: Logger, values: readonly string[]): void {
  const literals = (logger as unknown as Record<symbol, string[] | undefined>)[LITERAL_SECRETS];
  if (!literals) return;
  for (const value of values) if (value.length >= MIN_LITERAL_LENGTH && !literals.includes(value)) literals.push(value);
  // Longest first, so a key that contains another is blanked whole.
  literals.sort((a, b) => b.length - a.length);
}

/** A copy of `value` that is safe to write to a log. */
export function sanitizeForLog(value: unknown, literals: readonly string[] = [], depth = 0, seen: WeakSet<object> = new WeakSet()): unknown {
  if (typeof value === 'string') return maskSecretsInText(value, literals);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[circular]';
  if (depth >= MAX_DEPTH) return '[truncated]';
  seen.add(value);
  if (Buffer.isBuffer(value) || ArrayBuffer.isView(value)) return `[${(value as ArrayBufferView).byteLength} bytes]`;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (value instanceof Error) return sanitizeForLog(errorToObject(value), literals, depth, seen);
  if (value instanceof URL) return maskSecretsInText(value.href, literals);
  if (value instanceof Map) return sanitizeForLog(Object.fromEntries(value), literals, depth + 1, seen);
  if (typeof Headers !== 'undefined' && value instanceof Headers) return sanitizeForLog(Object.fromEntries(value.entries()), literals, depth + 1, seen);
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ARRAY_ITEMS).map((item) => sanitizeForLog(item, literals, depth + 1, seen));
    if (value.length > MAX_ARRAY_ITEMS) items.push(`[${value.length - MAX_ARRAY_ITEMS} more]`);
    return items;
  }
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // Trace ids are random hex that the token rule below would blank; they identify a trace, they grant nothing.
    if (TRACE_ID_KEY.test(key) && typeof item === 'string' && /^[0-9a-f]{16,32}$/.test(item)) {
      result[key] = item;
      continue;
    }
    result[safeKey(key, result, literals)] =
      isSecretKey(key) && item !== null && item !== undefined && typeof item !== 'boolean' ? REDACTED : sanitizeForLog(item, literals, depth + 1, seen);
  }
  return result;
}

/**
 * Keys are text too: a provider body can use a token or an IBAN as a JSON key (a map keyed by account or by token).
 * A masked key keeps its place; when two mask to the same text, the later ones are numbered so none is lost.
 */
function safeKey(key: string, taken: Record<string, unknown>, literals: readonly string[]): string {
  const masked = maskSecretsInText(key, literals);
  if (masked === key) return key;
  let name = masked;
  for (let n = 2; Object.hasOwn(taken, name); n += 1) name = `${masked}#${n}`;
  return name;
}

/** An Error as a plain object: type, message, stack, its own fields (a provider body, a status), and its cause. */
function errorToObject(error: Error): Record<string, unknown> {
  const object: Record<string, unknown> = { type: error.constructor?.name ?? error.name, message: error.message, stack: error.stack };
  for (const [key, item] of Object.entries(error)) if (!(key in object)) object[key] = item;
  if (error.cause !== undefined) object.cause = error.cause;
  if (error instanceof AggregateError) object.errors = error.errors;
  return object;
}

const IBAN_PATTERN = /\b([A-Z]{2}\d{2})[A-Z0-9]{7,26}([A-Z0-9]{4})\b/g;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Keeps country, check digits and the last four characters: enough to tell accounts apart in a log. */
export function maskIbans(text: string): string {
  return text.replace(IBAN_PATTERN, (_match, head: string, tail: string) => `${head}****${tail}`);
}

/** Credentials that can turn up inside free text: messages, stacks, URLs, provider bodies; `literals` as they are. */
export function maskSecretsInText(text: string, literals: readonly string[] = []): string {
  let unmasked = text;
  for (const literal of literals) if (unmasked.includes(literal)) unmasked = unmasked.split(literal).join(REDACTED);
  return maskIbans(
    unmasked
      .replace(/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g, REDACTED)
      .replace(/\b(Bearer|Basic)\s+[^\s"',;]+/gi, `$1 ${REDACTED}`)
      // JWS / JWT, detached-payload JWS (header..signature) included.
      .replace(/\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+/g, REDACTED)
      // A data webhook's last path segment is the task's secret.
      .replace(/(\/webhooks\/data\/)[^/?#\s"']+/g, `$1${REDACTED}`)
      .replace(/([?&](?:code|state|token|access_token|refresh_token|id_token|client_secret|code_verifier|session|key)=)[^&#\s"']+/gi, `$1${REDACTED}`)
      .replace(/((?:session|token|secret|key|password)["']?\s*[:=]\s*["']?)[^\s"',;&]{8,}/gi, `$1${REDACTED}`)
      // Opaque random tokens (session tokens, merchant keys, refresh tokens): long runs that mix letters and digits.
      .replace(/[A-Za-z0-9_-]{32,}/g, (run) => (UUID.test(run) || !/\d/.test(run) || !/[A-Za-z]/.test(run) ? run : REDACTED)),
  );
}

export type { Logger };
