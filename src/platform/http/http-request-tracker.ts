import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import { routeLabel } from '../observability/route-label';

/**
 * Knows which HTTP requests are in flight, so a shutdown can let them finish before the connections go, and
 * records each request's count and duration for /metrics when it ends.
 */
export class HttpRequestTracker {
  private readonly inFlight = new Set<ServerResponse>();
  private idleWaiters: (() => void)[] = [];
  private draining = false;

  constructor(private readonly metrics: GatewayMetrics) {}

  get isDraining(): boolean {
    return this.draining;
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Call first thing for every request. False when shutting down: a 503 has been sent and nothing else may be. */
  begin(req: IncomingMessage, res: ServerResponse): boolean {
    const started = performance.now();
    const route = routeLabel(req.url);
    res.once('close', () => {
      this.inFlight.delete(res);
      // 499 (nginx's "client closed request"): the client left before the answer was complete.
      this.metrics.httpRequest(req.method ?? 'OTHER', route, res.writableFinished ? res.statusCode : 499, (performance.now() - started) / 1000);
      if (this.inFlight.size === 0) this.notifyIdle();
    });
    if (this.draining) {
      const body = JSON.stringify({ error: { code: 'UPSTREAM_UNAVAILABLE', message: 'The gateway is shutting down; retry on another instance.' } });
      res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1', connection: 'close', 'cache-control': 'no-store' });
      res.end(body);
      return false;
    }
    this.inFlight.add(res);
    return true;
  }

  /** Stops taking requests: new ones get 503, keep-alive clients are told to close, idle connections go now. */
  startDraining(server: Server): void {
    this.draining = true;
    for (const res of this.inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
    server.closeIdleConnections();
  }

  /**
   * Waits for the requests in flight (until the deadline, a performance.now() instant), then closes every HTTP
   * connection left. Call after the WebSockets are closed: they share the server's sockets.
   */
  async drain(server: Server, deadline: number): Promise<void> {
    if (!this.draining) this.startDraining(server);
    if (this.inFlight.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - performance.now()));
        this.idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    server.closeAllConnections();
  }

  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }
}
