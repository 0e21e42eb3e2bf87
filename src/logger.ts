import pino, { type Logger } from 'pino';

/**
 * Structured JSON logs. Secrets are removed by path (headers, tokens, keys) and IBANs are masked wherever they
 * appear in a message, because provider error bodies can quote them back.
 */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  '*.authorization',
  '*.access_token',
  '*.refresh_token',
  '*.client_secret',
  '*.clientSecret',
  '*.accessToken',
  '*.refreshToken',
  '*.sessionToken',
  '*.privateKeyPem',
  '*.code_verifier',
  '*.codeVerifier',
  '*.signature',
  '*["x-svc-signature"]',
  '*["svc-signature"]',
  '*["tl-signature"]',
  '*.beneficiary_iban',
  '*.beneficiaryIban',
  '*.iban',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'bankgraph' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
      hooks: {
        logMethod(args, method) {
          method.apply(this, args.map((arg) => (typeof arg === 'string' ? maskIbans(arg) : arg)) as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
}

const IBAN_PATTERN = /\b([A-Z]{2}\d{2})[A-Z0-9]{7,26}([A-Z0-9]{4})\b/g;

/** Keeps country, check digits and the last four characters: enough to tell accounts apart in a log. */
export function maskIbans(text: string): string {
  return text.replace(IBAN_PATTERN, (_match, head: string, tail: string) => `${head}****${tail}`);
}

export type { Logger };
