import { OAuthStyleError } from '../http/respond';

export type DeliveryMode = { kind: 'sync' } | { kind: 'async'; webhookUri: string };

export interface DateRange {
  from?: string;
  to?: string;
}

const invalidRequest = (description: string): OAuthStyleError => new OAuthStyleError(400, 'invalid_request', description);

/** A query parameter given once, or not at all; repeating one makes the request ambiguous. */
export function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw invalidRequest(`${name} was given ${values.length} times; give it once`);
  return values[0];
}

/** `async=true&webhook_uri=<absolute http(s) URL>` queues a task; no async (or async=false) answers directly. */
export function deliveryMode(query: URLSearchParams): DeliveryMode {
  const async = single(query, 'async');
  const webhookUri = single(query, 'webhook_uri');
  if (async !== undefined && async !== 'true' && async !== 'false') {
    throw invalidRequest(`async must be true or false, got ${JSON.stringify(async)}`);
  }
  if (async !== 'true') {
    if (webhookUri !== undefined) throw invalidRequest('webhook_uri is only used with async=true; add async=true or drop webhook_uri');
    return { kind: 'sync' };
  }
  if (webhookUri === undefined || webhookUri === '') {
    throw invalidRequest('async=true needs webhook_uri, the URL-encoded absolute http(s) URL to notify when the task is done');
  }
  if (!isHttpUrl(webhookUri)) throw invalidRequest(`webhook_uri must be an absolute http(s) URL, got ${JSON.stringify(webhookUri)}`);
  return { kind: 'async', webhookUri };
}

/** `from` and `to`: real calendar dates, YYYY-MM-DD, inclusive, from <= to; either may be left out. */
export function dateRange(query: URLSearchParams): DateRange {
  const from = single(query, 'from');
  const to = single(query, 'to');
  for (const [name, value] of [['from', from], ['to', to]] as const) {
    if (value !== undefined && !isCalendarDate(value)) throw invalidRequest(`${name} must be a date written YYYY-MM-DD, got ${JSON.stringify(value)}`);
  }
  if (from !== undefined && to !== undefined && from > to) {
    throw new OAuthStyleError(400, 'invalid_date_range', `from (${from}) is after to (${to}); from must be on or before to`);
  }
  return { from, to };
}

/** The date part of a provider timestamp as written (its local date when it carries an offset). */
export function inRange(timestamp: string, range: DateRange): boolean {
  const date = timestamp.slice(0, 10);
  return (range.from === undefined || date >= range.from) && (range.to === undefined || date <= range.to);
}

function isCalendarDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}
