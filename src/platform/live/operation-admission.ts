import type { GraphQLError } from 'graphql';
import type { OperationPipeline, PreparedOperation } from '../graphql/operation-pipeline';
import type { Principal } from '../access/principal';
import { addressKey } from '../http/principal-key';
import type { SubscriptionCaps } from './subscription-caps';

export interface AdmissionRequest {
  /** The text to run, once persisted documents and APQ have resolved it. */
  query: string;
  operationName?: string | null;
  variables?: Readonly<Record<string, unknown>> | null;
  /** Whose live work it is (the user, the merchant key, or the address of a caller not signed in). */
  capKey: string;
  /** Subscriptions already active on this connection (a WebSocket; 0 for an HTTP stream, which carries one). */
  onConnection: number;
  /** Asked after the last wait: why this connection may run nothing more (revoked, expired, past a cap), if so. */
  endedBecause?(): GraphQLError | undefined;
}

export interface Admitted extends PreparedOperation {
  /** The subscription's root field, when it is one: it now counts against the caps until released. */
  subscriptionField?: string;
}

/**
 * What an operation that arrived on a live transport (WebSocket, SSE, multipart HTTP) must pass before it runs,
 * written once for the three of them: the pipeline's parse, validation, depth, alias and token limits and the
 * choice of operation, the connection still standing, the cost limit with its variables, then the subscription
 * caps (per connection and per principal, one count across transports). Rate limits and persisted documents come
 * before, from whoever read the request; plain HTTP runs the same stages through Apollo.
 */
export function admitOperation(
  deps: { pipeline: OperationPipeline; caps: SubscriptionCaps },
  request: AdmissionRequest,
): Admitted | { errors: readonly GraphQLError[] } {
  const prepared = deps.pipeline.prepare(request.query, request.operationName, request.variables);
  if ('errors' in prepared) return prepared;
  const ended = request.endedBecause?.();
  if (ended) return { errors: [ended] };
  const tooCostly = deps.pipeline.checkCost(prepared.args);
  if (tooCostly) return { errors: [tooCostly] };
  const { operation } = prepared;
  if (operation.operation !== 'subscription') return prepared;
  const refused = deps.caps.admit(request.onConnection, request.capKey);
  if (refused) return { errors: [refused] };
  const first = operation.selectionSet.selections[0];
  return { ...prepared, subscriptionField: first?.kind === 'Field' ? first.name.value : 'unknown' };
}

/** Whose live work an operation is, for the caps: as the rate limit's key, per user rather than per session. */
export function liveWorkKey(principal: Principal, remoteAddress: () => string | undefined): string {
  if (principal.kind === 'user') return `user:${principal.userId}`;
  if (principal.kind === 'merchant') return `merchant:${principal.keyId}`;
  return `ip:${addressKey(remoteAddress())}`;
}
