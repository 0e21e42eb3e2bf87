import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CircuitStateName } from '../provider/circuit-breakers';
import type { AttemptEvent } from '../provider/http.client';
import type { DataResource } from '../provider/data.client';
import type { CacheEvents } from '../provider/response-cache';

/** How an operation arrived: plain HTTP, WebSocket, a subscription streamed over HTTP (SSE, multipart), or an agent's tool call (MCP). */
export type Transport = 'http' | 'ws' | 'sse' | 'multipart' | 'mcp';
/** success: no errors; partial: data and errors; error: errors and no data; refused: stopped before execution. */
export type OperationOutcome = 'success' | 'partial' | 'error' | 'refused' | 'aborted';

const CIRCUIT_STATES: readonly CircuitStateName[] = ['closed', 'open', 'half-open'];

/** Operation names are chosen by clients; past this many distinct ones, new names are counted as `other`. */
const MAX_OPERATION_NAMES = 200;
const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Everything /metrics shows, in a registry of its own per gateway (tests run several gateways in one process).
 * Labels are bounded sets: routes are patterns (never a webhook's secret path), operation names are capped.
 *
 * For the webhook receivers and the pubsub: call `webhookEvent(source, outcome)` once per delivery received, and
 * `subscriptionStarted/Ended(field)` if subscriptions are ever started outside graphql-ws (graphql-ws ones are
 * counted by the gateway's WebSocket hooks already).
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly operationNames = new Set<string>();

  private readonly httpRequests = new Counter({
    name: 'bankgraph_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly httpDuration = new Histogram({
    name: 'bankgraph_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  private readonly operations = new Counter({
    name: 'bankgraph_graphql_operations_total',
    help: 'GraphQL operations, by operation name, type, transport and outcome.',
    labelNames: ['operation', 'type', 'transport', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly operationDuration = new Histogram({
    name: 'bankgraph_graphql_operation_duration_seconds',
    help: 'Time from receiving a GraphQL operation to its answer (for subscriptions: to their end).',
    labelNames: ['operation', 'type', 'transport'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  private readonly refusals = new Counter({
    name: 'bankgraph_graphql_refusals_total',
    help: 'Operations refused before execution, by reason (a limit name, or rate_limit) and transport.',
    labelNames: ['reason', 'transport'] as const,
    registers: [this.registry],
  });
  private readonly providerCalls = new Counter({
    name: 'bankgraph_provider_requests_total',
    help: 'Requests sent to the provider, retries included, by route and status ("none" when no answer came).',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly providerDuration = new Histogram({
    name: 'bankgraph_provider_request_duration_seconds',
    help: 'Duration of one provider request attempt, by route.',
    labelNames: ['route'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  private readonly providerRetries = new Counter({
    name: 'bankgraph_provider_retries_total',
    help: 'Provider requests that were retries of an earlier attempt, by route.',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });
  private readonly cacheLookups = new Counter({
    name: 'bankgraph_cache_lookups_total',
    help: 'Response-cache lookups by data resource and result (hit or miss).',
    labelNames: ['resource', 'result'] as const,
    registers: [this.registry],
  });
  private readonly cacheFailures = new Counter({
    name: 'bankgraph_cache_failures_total',
    help: 'Response-cache reads and writes that failed or took longer than 250 ms (answered as a miss), by operation.',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });
  private readonly answerCacheHits = new Counter({
    name: 'bankgraph_answer_cache_hits_total',
    help: 'Queries answered from the answer cache, without executing (src/platform/http/answer-cache.ts).',
    registers: [this.registry],
  });
  private readonly webhooks = new Counter({
    name: 'bankgraph_webhook_events_total',
    help: 'Provider webhook deliveries received, by source and outcome.',
    labelNames: ['source', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly reconcilerRepairs = new Counter({
    name: 'bankgraph_reconciler_repairs_total',
    help: 'What the reconciler repaired, by kind (payout_confirmed, payout_updated, payout_expired, payout_approval_expired, data_task_completed, data_task_failed).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  private readonly reconcilerRuns = new Counter({
    name: 'bankgraph_reconciler_runs_total',
    help: 'Reconciler passes run by this instance (while it held the lease), by outcome (ok or error).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly refundClaimConflicts = new Counter({
    name: 'bankgraph_refund_claim_conflicts_total',
    help: 'Refund claims not recorded because another idempotency key holds the refund (or the key holds another), by how the claim was learnt (provider_answer or refund_list).',
    labelNames: ['claim'] as const,
    registers: [this.registry],
  });
  private readonly payoutConflicts = new Counter({
    name: 'bankgraph_payout_conflicts_total',
    help: 'Payouts kept as conflict: sent with an uncertain outcome, then read back from the provider with other fields than the request (docs/money.md).',
    registers: [this.registry],
  });
  private readonly activeSubscriptions = new Gauge({
    name: 'bankgraph_active_subscriptions',
    help: 'GraphQL subscriptions currently open, by subscription field.',
    labelNames: ['field'] as const,
    registers: [this.registry],
  });
  private readonly circuits = new Gauge({
    name: 'bankgraph_provider_circuit_state',
    help: 'Provider circuit breakers that have changed state, by route: 1 on the current state (closed, open, half-open), 0 on the others.',
    labelNames: ['route', 'state'] as const,
    registers: [this.registry],
  });
  private readonly connectionCircuitsOpen = new Gauge({
    name: 'bankgraph_provider_connection_circuits_open',
    help: "Bank connections whose own circuit breaker on a provider route is open (their calls there fail fast; other connections' do not), by route.",
    labelNames: ['route'] as const,
    registers: [this.registry],
  });
  private readonly webSockets = new Gauge({
    name: 'bankgraph_websocket_connections',
    help: 'WebSocket connections currently open.',
    registers: [this.registry],
  });

  /** For ResponseCache. */
  readonly cacheEvents: CacheEvents = {
    onHit: (resource: DataResource) => this.cacheLookups.inc({ resource, result: 'hit' }),
    onMiss: (resource: DataResource) => this.cacheLookups.inc({ resource, result: 'miss' }),
    onFailure: (operation: 'get' | 'set') => this.cacheFailures.inc({ operation }),
  };

  constructor(options: { defaultMetrics?: boolean } = {}) {
    // Process metrics (memory, CPU, event-loop lag) come from prom-client's standard collector.
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.webSockets.set(0);
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    const safeMethod = /^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)$/.test(method) ? method : 'OTHER';
    this.httpRequests.inc({ method: safeMethod, route, status: String(status) });
    this.httpDuration.observe({ method: safeMethod, route }, seconds);
  }

  operation(details: {
    operationName: string | undefined;
    operationType: string | undefined;
    transport: Transport;
    outcome: OperationOutcome;
    seconds: number;
  }): void {
    const operation = this.operationLabel(details.operationName);
    const type = details.operationType ?? 'unknown';
    this.operations.inc({ operation, type, transport: details.transport, outcome: details.outcome });
    this.operationDuration.observe({ operation, type, transport: details.transport }, details.seconds);
  }

  refused(reason: string, transport: Transport): void {
    this.refusals.inc({ reason, transport });
  }

  /** For the provider HTTP client's onAttempt hook. */
  providerAttempt(event: AttemptEvent): void {
    this.providerCalls.inc({ route: event.route, method: event.method, status: event.status === undefined ? 'none' : String(event.status) });
    this.providerDuration.observe({ route: event.route }, event.durationMs / 1000);
    if (event.retry) this.providerRetries.inc({ route: event.route });
  }

  /** For the provider HTTP client's circuit breakers. */
  circuitState(route: string, state: CircuitStateName): void {
    for (const each of CIRCUIT_STATES) this.circuits.set({ route, state: each }, each === state ? 1 : 0);
  }

  /** For the circuit breakers of single bank connections: how many are open on `route`. */
  connectionCircuits(route: string, open: number): void {
    this.connectionCircuitsOpen.set({ route }, open);
  }

  /** One webhook delivery: `source` e.g. `payments` or `data`; `outcome` e.g. `accepted`, `duplicate`, `bad_signature`, `malformed`, `unknown_type`. */
  answerServedFromCache(): void {
    this.answerCacheHits.inc();
  }

  webhookEvent(source: string, outcome: string): void {
    this.webhooks.inc({ source, outcome });
  }

  reconcilerRepair(kind: string): void {
    this.reconcilerRepairs.inc({ kind });
  }

  /** A refund claimed for two refund attempts: it stays with the first, and the later claim is not recorded. */
  refundClaimConflict(claim: 'provider_answer' | 'refund_list'): void {
    this.refundClaimConflicts.inc({ claim });
  }

  /** For the payouts (PayoutMetrics). */
  payoutConflict(): void {
    this.payoutConflicts.inc();
  }

  reconcilerRun(outcome: 'ok' | 'error'): void {
    this.reconcilerRuns.inc({ outcome });
  }

  subscriptionStarted(field: string): void {
    this.activeSubscriptions.inc({ field });
  }

  subscriptionEnded(field: string): void {
    this.activeSubscriptions.dec({ field });
  }

  webSocketOpened(): void {
    this.webSockets.inc();
  }

  webSocketClosed(): void {
    this.webSockets.dec();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  private operationLabel(name: string | undefined): string {
    if (!name) return 'anonymous';
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) return 'other';
    if (this.operationNames.has(name)) return name;
    if (this.operationNames.size >= MAX_OPERATION_NAMES) return 'other';
    this.operationNames.add(name);
    return name;
  }
}
