import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { nextPrefix, SharedNext, writeNext, writeText } from '../../../../src/platform/live/next-frame';

/** A ws server and one client connected to it; `received` collects the client's text messages. */
async function pair(perMessageDeflate = false): Promise<{ server: WebSocket; received: string[]; close(): Promise<void> }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const accepted = new Promise<WebSocket>((resolve) => wss.once('connection', resolve));
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, { perMessageDeflate });
  const received: string[] = [];
  client.on('message', (data, isBinary) => {
    expect(isBinary).toBe(false);
    received.push(data.toString());
  });
  await new Promise<void>((resolve) => client.once('open', () => resolve()));
  return {
    server: await accepted,
    received,
    async close() {
      client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

async function until(received: string[], count: number): Promise<void> {
  for (let i = 0; i < 200 && received.length < count; i++) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('writeNext', () => {
  it.each([
    ['a small result (one copied frame, 7-bit length)', 'op-1', { data: { refundUpdated: { id: 'r', status: 'EXECUTED' } } }],
    ['a medium result (16-bit length)', 'ü-id', { data: { text: 'x'.repeat(300) } }],
    ['a large result (shared tail written as its own buffer, 64-bit length)', 'big', { data: { text: 'é'.repeat(40_000) } }],
  ])('sends %s as the exact graphql-ws next message', async (_case, id, result) => {
    const { server, received, close } = await pair();
    try {
      const prefix = nextPrefix(id);
      const shared = new SharedNext(JSON.stringify(result));
      expect(writeNext(server, prefix, Buffer.byteLength(prefix), shared)).toBe(true);
      expect(writeNext(server, prefix, Buffer.byteLength(prefix), shared)).toBe(true);
      await until(received, 2);
      const expected = JSON.stringify({ id, type: 'next', payload: result });
      expect(received).toEqual([expected, expected]);
    } finally {
      await close();
    }
  });

  it('goes through ws.send when ws has a say in the bytes (permessage-deflate), and refuses a closed socket', async () => {
    const { server, received, close } = await pair(true);
    try {
      const send = jest.spyOn(server, 'send');
      const prefix = nextPrefix('z');
      expect(writeNext(server, prefix, Buffer.byteLength(prefix), new SharedNext('{"data":null}'))).toBe(true);
      await until(received, 1);
      expect(received).toEqual(['{"id":"z","type":"next","payload":{"data":null}}']);
      expect(send).toHaveBeenCalledTimes(1);
      server.close();
      expect(writeNext(server, prefix, Buffer.byteLength(prefix), new SharedNext('{"data":null}'))).toBe(false);
    } finally {
      await close();
    }
  });

  it('keeps order behind data ws still has buffered', async () => {
    const { server, received, close } = await pair();
    try {
      const send = jest.spyOn(server, 'send');
      const prefix = nextPrefix('o');
      // A message ws could not write at once stays buffered in the socket; the next one must queue behind it.
      server.send('first');
      Object.defineProperty(server, 'bufferedAmount', { value: 1, configurable: true });
      writeNext(server, prefix, Buffer.byteLength(prefix), new SharedNext('{"data":2}'));
      expect(send).toHaveBeenCalledTimes(2);
      await until(received, 2);
      expect(received).toEqual(['first', '{"id":"o","type":"next","payload":{"data":2}}']);
    } finally {
      await close();
    }
  });
});

describe('writeText', () => {
  it.each([
    ['connection_ack (7-bit length)', JSON.stringify({ type: 'connection_ack' })],
    ['a 16-bit length', JSON.stringify({ id: 'ü', type: 'next', payload: { data: { text: 'é'.repeat(200) } } })],
    ['a 64-bit length', JSON.stringify({ id: 'x', type: 'next', payload: { data: { text: 'y'.repeat(70_000) } } })],
  ])('sends %s as the exact message, in order with writeNext', async (_case, message) => {
    const { server, received, close } = await pair();
    try {
      const send = jest.spyOn(server, 'send');
      expect(writeText(server, message)).toBe(true);
      const prefix = nextPrefix('after');
      writeNext(server, prefix, Buffer.byteLength(prefix), new SharedNext('{"data":1}'));
      await until(received, 2);
      expect(received).toEqual([message, '{"id":"after","type":"next","payload":{"data":1}}']);
      expect(send).not.toHaveBeenCalled();
    } finally {
      await close();
    }
  });

  it('leaves the message to ws.send when ws has a say in the bytes or data buffered, and refuses a closed socket', async () => {
    const deflating = await pair(true);
    try {
      expect(writeText(deflating.server, '{"type":"connection_ack"}')).toBe(false);
    } finally {
      await deflating.close();
    }
    const { server, close } = await pair();
    try {
      Object.defineProperty(server, 'bufferedAmount', { value: 1, configurable: true });
      expect(writeText(server, '{"type":"connection_ack"}')).toBe(false);
      server.close();
      expect(writeText(server, '{"type":"connection_ack"}')).toBe(false);
    } finally {
      await close();
    }
  });
});
