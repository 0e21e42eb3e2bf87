import { createLogger } from '../../../src/platform/observability/logger';
import { dispatchByEventType, type ProviderEvent, type WebhookDelivery } from '../../../src/webhooks';

const logger = createLogger('silent');

function delivery(body: Record<string, unknown>): WebhookDelivery {
  return { key: '', body, requestId: 'req-1', receivedAt: new Date('2026-01-01T00:00:00Z') };
}

describe('dispatchByEventType', () => {
  const seen: ProviderEvent[] = [];
  const dispatch = dispatchByEventType(
    {
      refund_executed: async (event) => {
        seen.push(event);
        return { event: { id: event.eventId, type: event.type } };
      },
    },
    logger,
  );

  beforeEach(() => {
    seen.length = 0;
  });

  it('hands an event to the handler registered for its type, with its type and id', async () => {
    await expect(dispatch(delivery({ type: 'refund_executed', event_id: 'e-1', payment_id: 'p' }))).resolves.toEqual({
      event: { id: 'e-1', type: 'refund_executed' },
    });
    expect(seen).toMatchObject([{ type: 'refund_executed', eventId: 'e-1', body: { payment_id: 'p' }, requestId: 'req-1' }]);
  });

  it('ignores a type nobody registered, even one named like an object property', async () => {
    for (const type of ['refund_pending', 'constructor', '__proto__', 'toString']) {
      await expect(dispatch(delivery({ type, event_id: 'e-2' }))).resolves.toEqual({ ignored: true });
    }
    expect(seen).toEqual([]);
  });

  it('refuses an event without a type, or with a missing or oversized event id', async () => {
    for (const body of [{ event_id: 'e-3' }, { type: '' }, { type: 'refund_executed' }, { type: 'refund_executed', event_id: 'x'.repeat(201) }]) {
      await expect(dispatch(delivery(body))).resolves.toMatchObject({
        status: 400,
        code: 'BAD_USER_INPUT',
        message: expect.stringMatching(/^Malformed webhook: /),
      });
    }
    expect(seen).toEqual([]);
  });
});
