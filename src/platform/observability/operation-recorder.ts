import type { GraphQLFormattedError } from 'graphql';
import type { Logger } from './logger';
import type { GatewayMetrics, OperationOutcome, Transport } from './gateway-metrics';
import { annotateOperation } from './operation-span';

export interface OperationRecord {
  requestId: string;
  /** describePrincipal(): a user id, a merchant key's id, `anonymous` or `invalid` — never a credential. */
  principal: string;
  transport: Transport;
  operationName: string | undefined;
  operationType: string | undefined;
  durationMs: number;
  outcome: OperationOutcome;
  /** The distinct `extensions.code`s the client got. */
  errorCodes?: string[];
  /** Why it was refused (`rate_limit`, or a limit name such as `maxDepth`). */
  refusal?: string;
  /** HTTP status, for HTTP. */
  status?: number;
  /** The answer was served from the AnswerCache, without executing. */
  answerCache?: 'hit';
}

/**
 * The one log line and the metrics of one GraphQL operation, whichever transport and however it ended; every path
 * (Apollo, the pre-Apollo refusals, graphql-ws) reports through here so the lines look alike.
 */
export class OperationRecorder {
  constructor(
    private readonly logger: Logger,
    private readonly metrics: GatewayMetrics,
  ) {}

  record(entry: OperationRecord): void {
    const { durationMs, ...rest } = entry;
    this.logger.info({ ...rest, durationMs: Math.round(durationMs * 10) / 10 }, 'graphql operation');
    if (entry.transport === 'http' || entry.transport === 'mcp') annotateOperation(entry);
    this.metrics.operation({
      operationName: entry.operationName,
      operationType: entry.operationType,
      transport: entry.transport,
      outcome: entry.outcome,
      seconds: durationMs / 1000,
    });
    if (entry.refusal) this.metrics.refused(entry.refusal, entry.transport);
  }
}

/** The outcome as the client saw it, from what it was sent. */
export function outcomeOf(
  data: unknown,
  errors: readonly GraphQLFormattedError[] | undefined,
): { outcome: OperationOutcome; errorCodes?: string[]; refusal?: string } {
  if (!errors || errors.length === 0) return { outcome: 'success' };
  const errorCodes = [...new Set(errors.map((error) => String(error.extensions?.code ?? 'UNKNOWN')))];
  const limited = errors.find((error) => error.extensions?.reason === 'OPERATION_LIMIT' || error.extensions?.reason === 'RATE_LIMITED');
  if (limited) {
    const refusal = limited.extensions?.reason === 'RATE_LIMITED' ? 'rate_limit' : String(limited.extensions?.limit ?? 'limit');
    return { outcome: 'refused', errorCodes, refusal };
  }
  return { outcome: data === null || data === undefined ? 'error' : 'partial', errorCodes };
}
