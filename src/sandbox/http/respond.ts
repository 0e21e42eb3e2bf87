import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length, ...headers });
  res.end(bytes);
}

export function sendHtml(res: ServerResponse, status: number, html: string): void {
  const bytes = Buffer.from(html);
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': bytes.length });
  res.end(bytes);
}

export const PROBLEM_TYPE_BASE = 'https://docs.truelayer.com/docs/error-types#';

const PROBLEM_TITLES: Record<string, string> = {
  'invalid-parameters': 'Invalid Parameters',
  unauthenticated: 'Unauthenticated',
  'invalid-signature': 'Invalid Signature',
  forbidden: 'Forbidden',
  'not-found': 'Not Found',
  'method-not-allowed': 'Method Not Allowed',
  'payment-not-refundable': 'Payment Not Refundable',
  'refund-limit-exceeded': 'Refund Limit Exceeded',
  'idempotency-key-concurrency-conflict': 'Idempotency-Key Concurrency Conflict',
  'idempotency-key-reuse': 'Idempotency-Key Reuse',
  'rate-limit-exceeded': 'Rate Limit Exceeded',
  'internal-server-error': 'Internal Server Error',
  'service-unavailable': 'Service Unavailable',
  'payload-too-large': 'Payload Too Large',
};

export type ProblemSlug = keyof typeof PROBLEM_TITLES & string;

/** An error in the provider's v1/v3 shape: application/problem+json. */
export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly slug: string,
    readonly detail: string,
    readonly errors?: Record<string, string[]>,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

/** An error in the OAuth and data API shape: `{ error, error_description }`. */
export class OAuthStyleError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
}

export function sendProblem(res: ServerResponse, problem: Problem): void {
  const body = {
    type: PROBLEM_TYPE_BASE + problem.slug,
    title: PROBLEM_TITLES[problem.slug] ?? problem.slug,
    status: problem.status,
    detail: problem.detail,
    trace_id: randomUUID(),
    ...(problem.errors ? { errors: problem.errors } : {}),
  };
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(problem.status, {
    'content-type': 'application/problem+json',
    'content-length': bytes.length,
    ...problem.headers,
  });
  res.end(bytes);
}

export function sendOAuthStyleError(res: ServerResponse, error: OAuthStyleError): void {
  sendJson(res, error.status, { error: error.error, error_description: error.description }, error.headers);
}

/**
 * A number written into JSON exactly as given, e.g. `100.10` or `-2.99`: the data API sends decimals as JSON
 * numbers, and a real bank's trailing zeros must survive so the gateway's digit-keeping is actually exercised.
 */
export class JsonNumber {
  constructor(readonly text: string) {
    if (!/^-?(0|[1-9]\d*)(\.\d+)?$/.test(text)) throw new RangeError(`not a JSON number literal: ${text}`);
  }

  toNumber(): number {
    return Number(this.text);
  }
}

const RAW_MARK = '\u0000raw:';

export function stringifyProviderJson(body: unknown): string {
  const text = JSON.stringify(body, (_key, value: unknown) => (value instanceof JsonNumber ? RAW_MARK + value.text : value));
  return text.replace(/"\\u0000raw:(-?[0-9.]+)"/g, '$1');
}

export function sendProviderJson(res: ServerResponse, status: number, body: unknown): void {
  sendJsonText(res, status, stringifyProviderJson(body));
}

/**
 * Each frozen element's provider JSON, written once: serialising with the JsonNumber replacer dominates the
 * sandbox's work on large lists, and the sandbox is the provider the gateways under test wait for. Fixture
 * transactions are deep-frozen when made (fixtures/users.ts), so a text kept here can never be stale; an element
 * that is not frozen is serialised every time.
 */
const elementTexts = new WeakMap<object, string>();

function elementText(element: unknown): string {
  if (typeof element !== 'object' || element === null || !Object.isFrozen(element)) return stringifyProviderJson(element);
  let text = elementTexts.get(element);
  if (text === undefined) {
    text = stringifyProviderJson(element);
    elementTexts.set(element, text);
  }
  return text;
}

/**
 * Characters of a results body turned into one Buffer. A whole large list made as one string and one Buffer puts
 * both on freshly mapped pages (V8's large-object space, malloc's mmap), each a page fault; pieces this size reuse
 * memory.
 */
const RESULTS_PIECE_CHARS = 16 * 1024;

/** `{"results": [...]}` in the provider's JSON (the same text sendProviderJson writes for it), in pieces cut between elements. */
export function providerResultsBody(results: readonly unknown[]): Buffer[] {
  const pieces: Buffer[] = [];
  let text = '{"results":[';
  for (let i = 0; i < results.length; i += 1) {
    text += (i === 0 ? '' : ',') + elementText(results[i]);
    if (text.length >= RESULTS_PIECE_CHARS) {
      pieces.push(Buffer.from(text));
      text = '';
    }
  }
  pieces.push(Buffer.from(`${text}]}`));
  return pieces;
}

export function sendProviderResults(res: ServerResponse, status: number, results: readonly unknown[]): void {
  const pieces = providerResultsBody(results);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': pieces.reduce((length, piece) => length + piece.length, 0) });
  // Corked: the pieces leave in one writev, not one write each.
  res.cork();
  for (let i = 0; i < pieces.length - 1; i += 1) res.write(pieces[i]);
  res.end(pieces[pieces.length - 1]);
  res.uncork();
}

function sendJsonText(res: ServerResponse, status: number, text: string): void {
  const bytes = Buffer.from(text);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length });
  res.end(bytes);
}
