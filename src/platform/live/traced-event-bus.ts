import { context } from '@opentelemetry/api';
import type { EventBus, EventHandler } from './event-bus';
import { SpanKind, type Span, type Telemetry } from '../observability/telemetry';

/**
 * The event bus with spans: `live publish <kind>` around each publish, and one `live deliver <kind>` per event per
 * instance, counting the subscribers it reached here. Both buses hand every listener of an event the same object in
 * one synchronous loop, which is how the listeners of one event are told apart from the next. On the in-memory bus
 * delivery runs in the publisher's context, so it is the publish span's child (webhook received -> stored ->
 * published -> delivered in one trace); over Redis the receiving instance starts a trace of its own.
 */
export class TracedEventBus implements EventBus {
  private readonly delivering = new WeakMap<object, { span: Span; subscribers: number }>();

  constructor(
    private readonly inner: EventBus,
    private readonly telemetry: Telemetry,
  ) {}

  publish(topic: string, payload: unknown): Promise<void> {
    return this.telemetry.span(`live publish ${kindOf(topic)}`, { kind: SpanKind.PRODUCER, attributes: { 'bankgraph.live.topic': kindOf(topic) } }, () =>
      this.inner.publish(topic, payload),
    );
  }

  listen(topic: string, handler: EventHandler): Promise<() => Promise<void>> {
    return this.inner.listen(topic, (payload) => {
      this.delivered(topic, payload);
      handler(payload);
    });
  }

  checkReady(): Promise<void> {
    return this.inner.checkReady();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private delivered(topic: string, payload: unknown): void {
    const tracer = this.telemetry.tracer;
    if (!tracer || typeof payload !== 'object' || payload === null) return;
    const current = this.delivering.get(payload);
    if (current) {
      current.subscribers += 1;
      return;
    }
    const span = tracer.startSpan(
      `live deliver ${kindOf(topic)}`,
      { kind: SpanKind.CONSUMER, attributes: { 'bankgraph.live.topic': kindOf(topic) } },
      context.active(),
    );
    const delivery = { span, subscribers: 1 };
    this.delivering.set(payload, delivery);
    setImmediate(() => {
      this.delivering.delete(payload);
      span.setAttribute('bankgraph.live.subscribers', delivery.subscribers);
      span.end();
    });
  }
}

/** `payout`, `refund`, `data-task`: the topic without the id, which is enough to name a span. */
function kindOf(topic: string): string {
  const at = topic.indexOf(':');
  return at < 0 ? topic : topic.slice(0, at);
}
