import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

/** A span as the tests compare them, whether read from an in-memory exporter or decoded from OTLP. */
export interface SeenSpan {
  traceId: string;
  spanId: string;
  parentId: string | undefined;
  name: string;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
}

export function fromReadable(span: ReadableSpan): SeenSpan {
  const ms = ([seconds, nanos]: [number, number]): number => seconds * 1_000 + nanos / 1e6;
  return {
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentId: span.parentSpanContext?.spanId,
    name: span.name,
    startMs: ms(span.startTime),
    endMs: ms(span.endTime),
    attributes: { ...span.attributes },
  };
}

export function ancestorsOf(span: SeenSpan, spans: readonly SeenSpan[]): SeenSpan[] {
  const byId = new Map(spans.map((each) => [each.spanId, each]));
  const chain: SeenSpan[] = [];
  for (let parent = span.parentId && byId.get(span.parentId); parent; parent = parent.parentId && byId.get(parent.parentId)) chain.push(parent);
  return chain;
}

/**
 * The SDK stamps a span's start with Date.now(), in whole milliseconds, and measures its end from that start, so two
 * spans' clocks can disagree by up to a millisecond: "after" between two spans allows that much.
 */
export const SPAN_CLOCK_SLACK_MS = 1;

/** True when some instant lies inside every one of the spans. */
export function allOverlap(spans: readonly SeenSpan[]): boolean {
  return Math.max(...spans.map((span) => span.startMs)) < Math.min(...spans.map((span) => span.endMs));
}

/**
 * The cold `viewer { accounts { balance transactions } cards { balance } }` query: one trace; every provider call
 * under the operation span; the two list calls (accounts, cards) in parallel; each account's and card's calls
 * after the list it depends on — two calls in sequence — and all of those in parallel.
 */
export function expectColdViewerTrace(spans: readonly SeenSpan[], accounts: number, cards: number): void {
  const operation = spans.find((span) => span.name === 'query ViewerGraph');
  if (!operation) throw new Error(`no span "query ViewerGraph" among ${spans.map((span) => span.name).join(', ')}`);
  const provider = spans.filter((span) => span.name.startsWith('GET data.'));
  expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([operation.traceId]));
  for (const call of provider) expect(ancestorsOf(call, spans)).toContain(operation);

  const named = (route: string): SeenSpan[] => provider.filter((span) => span.attributes['bankgraph.provider.route'] === route);
  const [accountList, cardList] = [named('data.accounts'), named('data.cards')];
  expect([accountList.length, cardList.length]).toEqual([1, 1]);
  expect(allOverlap([accountList[0]!, cardList[0]!])).toBe(true);

  const perAccount = [...named('data.accountBalance'), ...named('data.accountTransactions')];
  const perCard = named('data.cardBalance');
  expect([perAccount.length, perCard.length]).toEqual([accounts * 2, cards]);
  for (const call of perAccount) expect(call.startMs).toBeGreaterThanOrEqual(accountList[0]!.endMs - SPAN_CLOCK_SLACK_MS);
  for (const call of perCard) expect(call.startMs).toBeGreaterThanOrEqual(cardList[0]!.endMs - SPAN_CLOCK_SLACK_MS);
  expect(allOverlap([...perAccount, ...perCard])).toBe(true);
  expect(provider).toHaveLength(2 + accounts * 2 + cards);
}
