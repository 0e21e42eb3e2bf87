import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { createGateway, type Gateway } from '../../src/app/gateway';
import type { ProviderRefund } from '../../src/platform/provider/provider-types';
import { topics } from '../../src/platform/live/topics';
import { MULTIPART_ACCEPT } from '../helpers/http-stream-client';
import { fixtures, paymentsIn } from '../helpers/money';
import { graphqlAt, signInAt, startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';

const FULL = `subscription Full($paymentId: ID!) {
  refundUpdated(paymentId: $paymentId) { id refundId paymentId amountInMinor currency status reference createdAt authorizedAt executedAt failureReason }
}`;
const STATUS = 'subscription Status($paymentId: ID!) { refundUpdated(paymentId: $paymentId) { refundId status } }';

/** What one subscriber read, as it arrived: each WebSocket frame's text, or an HTTP stream's body. */
interface Subscriber {
  name: string;
  /** The frames (WebSocket) or the body read so far as one string (SSE, multipart). */
  received(): string[];
  /** Results received so far. */
  results(): number;
  close(): void;
}

/** A graphql-ws client written out by hand, so every frame is seen exactly as the gateway wrote it. */
async function overWebSocket(name: string, gatewayUrl: string, key: string, operations: Record<string, string>, paymentId: string): Promise<Subscriber> {
  const socket = new WebSocket(`${gatewayUrl.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
  const frames: string[] = [];
  socket.on('message', (data, isBinary) => frames.push(isBinary ? `binary:${data.toString('hex')}` : data.toString()));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } }));
  await waitFor(() => (frames.length > 0 ? true : undefined), `${name}: connection_ack`);
  for (const [id, query] of Object.entries(operations)) socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query, variables: { paymentId } } }));
  return {
    name,
    received: () => frames,
    results: () => frames.filter((frame) => frame.includes('"type":"next"')).length,
    close: () => socket.terminate(),
  };
}

/** An SSE or multipart subscription read with fetch, its body kept byte for byte. */
function overHttpStream(name: string, transport: 'sse' | 'multipart', gatewayUrl: string, key: string, query: string, paymentId: string): Subscriber {
  const abort = new AbortController();
  const chunks: Buffer[] = [];
  const body = (): string => Buffer.concat(chunks).toString('utf8');
  void (async () => {
    const response = await fetch(`${gatewayUrl}${transport === 'sse' ? '/graphql/stream' : '/graphql'}`, {
      method: 'POST',
      signal: abort.signal,
      headers: { 'content-type': 'application/json', accept: transport === 'sse' ? 'text/event-stream' : MULTIPART_ACCEPT, authorization: `Bearer ${key}` },
      body: JSON.stringify({ query, variables: { paymentId } }),
    });
    for await (const chunk of response.body!) chunks.push(Buffer.from(chunk as Uint8Array));
  })().catch(() => undefined);
  return {
    name,
    received: () => [body()],
    results: () => body().split(transport === 'sse' ? 'event: next\n' : '{"payload":').length - 1,
    close: () => abort.abort(),
  };
}

/** The same subscribers on one gateway: operations shared by several of them on every transport, and one of their own. */
async function subscribersOf(gatewayUrl: string, key: string, paymentId: string): Promise<Subscriber[]> {
  return [
    await overWebSocket('ws socket 1', gatewayUrl, key, { 'full-1': FULL, 'status-1': STATUS }, paymentId),
    await overWebSocket('ws socket 2', gatewayUrl, key, { 'full-ü': FULL }, paymentId),
    overHttpStream('sse full 1', 'sse', gatewayUrl, key, FULL, paymentId),
    overHttpStream('sse full 2', 'sse', gatewayUrl, key, FULL, paymentId),
    overHttpStream('sse status', 'sse', gatewayUrl, key, STATUS, paymentId),
    overHttpStream('multipart full 1', 'multipart', gatewayUrl, key, FULL, paymentId),
    overHttpStream('multipart full 2', 'multipart', gatewayUrl, key, FULL, paymentId),
    overHttpStream('multipart status', 'multipart', gatewayUrl, key, STATUS, paymentId),
  ];
}

/** Results each subscriber expects once `events` distinct states were published (a ws socket with two operations gets two per state). */
const expectedResults = (subscriber: Subscriber, states: number): number => (subscriber.name === 'ws socket 1' ? 2 * states : states);

/**
 * FAST_PATHS: the fan-out's fast paths (one execution per operation, results written straight to the sockets, frames
 * written past ws) must put on every connection exactly the bytes the ordinary path does. The same subscribers on a
 * gateway with them on and one with them off, the same events published on both: every frame and every stream body
 * compared; and a query over the provider's lists, kept as bytes or parsed whole, answered the same.
 */
describe('FAST_PATHS=on and off give every client the same bytes', () => {
  let stack: Stack;
  let ordinary: Gateway;
  const ordinaryDir = mkdtempSync(join(tmpdir(), 'bankgraph-fast-paths-'));
  const subscribers: Subscriber[] = [];

  beforeAll(async () => {
    stack = await startStack({ env: { STREAM_HEARTBEAT_MS: String(3600 * 1000) } });
    ordinary = await createGateway({
      ...stack.config,
      server: { ...stack.config.server, fastPaths: false },
      store: { ...stack.config.store, url: `sqlite://${join(ordinaryDir, 'gateway.sqlite')}` },
    });
  });

  afterAll(async () => {
    for (const subscriber of subscribers) subscriber.close();
    try {
      await ordinary?.close();
    } finally {
      await stack?.close();
      rmSync(ordinaryDir, { recursive: true, force: true });
    }
  });

  it('over graphql-ws, SSE and multipart, for shared and single operations, small and large results, one event or a burst', async () => {
    expect(stack.config.server.fastPaths).toBe(true);
    const paymentId = paymentsIn(await fixtures(stack), 'settled')[0]!.id;
    const gateways = [stack.gateway, ordinary];
    const [fast, slow] = await Promise.all(gateways.map((gateway) => subscribersOf(gateway.url, stack.merchantKey, paymentId)));
    subscribers.push(...fast!, ...slow!);
    const publish = (refund: ProviderRefund): Promise<unknown> =>
      Promise.all(gateways.map((gateway) => gateway.features.live.bus.publish(topics.refund(paymentId), { paymentId, refund })));
    const allHave = (states: number): true | undefined =>
      subscribers.every((subscriber) => subscriber.results() >= expectedResults(subscriber, states)) ? true : undefined;

    const first: ProviderRefund = {
      id: randomUUID(),
      amount_in_minor: 100,
      currency: 'GBP',
      status: 'pending',
      reference: 'fast paths',
      created_at: '2026-01-01T00:00:00.000Z',
    };
    // Until every subscriber listens: a repeated state is sent once, so publishing it again adds nothing.
    await waitFor(async () => {
      await publish(first);
      return allHave(1);
    }, 'every subscriber’s first result');

    const second: ProviderRefund = { ...first, id: randomUUID(), amount_in_minor: 250, reference: `large ${'é'.repeat(6_000)}` };
    await publish({ ...first, status: 'authorized', authorized_at: '2026-01-01T00:01:00.000Z' });
    await waitFor(() => allHave(2), 'the authorization');
    // A burst: published back to back, so later events arrive while earlier ones are on their way.
    await publish(second);
    await publish({ ...first, status: 'executed', authorized_at: '2026-01-01T00:01:00.000Z', executed_at: '2026-01-01T00:02:00.000Z' });
    await publish({ ...second, status: 'authorized', authorized_at: '2026-01-01T00:03:00.000Z' });
    await publish({ ...second, status: 'failed', failure_reason: 'payment_failed' });
    await waitFor(() => allHave(6), 'the burst', 10_000);

    fast!.forEach((subscriber, i) => {
      expect({ name: subscriber.name, received: subscriber.received() }).toEqual({ name: slow![i]!.name, received: slow![i]!.received() });
    });
    // Read to the end: each saw every state once, in order.
    expect(
      fast![0]!
        .received()
        .filter((frame) => frame.includes('"full-1"'))
        .map((frame) => /"status":"(\w+)"/.exec(frame)?.[1]),
    ).toEqual(['PENDING', 'AUTHORIZED', 'PENDING', 'EXECUTED', 'AUTHORIZED', 'FAILED']);
  });

  it('a query over the provider’s lists answers the same: the lists scanned and parsed where read, or parsed whole', async () => {
    const query = '{ viewer { accounts { id displayName transactions(first: 5) { totalCount nodes { id description amount { amount currency } } } } } }';
    const [fastAnswer, ordinaryAnswer] = await Promise.all(
      [stack.gateway, ordinary].map(async (gateway) => graphqlAt(gateway.url, query, undefined, await signInAt(gateway.url, 'john', 'doe'))),
    );
    expect(fastAnswer!.errors).toBeUndefined();
    expect(JSON.stringify(fastAnswer!.data)).toContain('"amount"');
    expect(ordinaryAnswer!.data).toEqual(fastAnswer!.data);
  });
});
