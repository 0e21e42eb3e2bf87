import type { ApolloServerPlugin } from '@apollo/server';
import { getOperationAST, type GraphQLError } from 'graphql';
import { describePrincipal } from './operation-context';
import type { OperationContext } from './operation-context';
import type { Logger } from '../observability/logger';
import { gatewayErrorOf, isUnexpected } from './error-masking';
import { outcomeOf, type OperationRecorder } from '../observability/operation-recorder';

/**
 * Over HTTP: the log line and metrics of each operation (through the recorder), and the detail of each error —
 * the provider's answer, the unexpected exception — which the client never sees but support needs, under the
 * request id the client was given.
 */
export function operationObserverPlugin(recorder: OperationRecorder, logger: Logger): ApolloServerPlugin<OperationContext> {
  return {
    async requestDidStart() {
      const started = performance.now();
      return {
        async didEncounterErrors({ errors, contextValue }) {
          for (const error of errors) logErrorDetail(logger, error, contextValue.requestId);
        },
        async willSendResponse({ response, contextValue, operationName, operation, request, document }) {
          const body = response.body.kind === 'single' ? response.body.singleResult : undefined;
          // A document that failed validation has no resolved operation; its name still identifies it in logs.
          const written = operation ?? (document ? getOperationAST(document, request.operationName) : null) ?? undefined;
          recorder.record({
            requestId: contextValue.requestId,
            principal: describePrincipal(contextValue.principal),
            // An agent's operation came through /mcp, which runs it on this same Apollo.
            transport: contextValue.agent ? 'mcp' : 'http',
            operationName: operationName ?? written?.name?.value ?? request.operationName ?? undefined,
            operationType: written?.operation,
            durationMs: performance.now() - started,
            status: response.http.status ?? 200,
            ...outcomeOf(body?.data, body?.errors),
          });
        },
      };
    },
  };
}

/** What the client's masked error stood for, in the log. Shared with the WebSocket hooks. */
export function logErrorDetail(logger: Logger, error: GraphQLError, requestId: string): void {
  const known = gatewayErrorOf(error);
  if (known && !isUnexpected(known)) {
    const upstream = (known as { originalError?: unknown }).originalError;
    // The gateway's own refusals (bad input, not found) are routine; a provider failure is worth a warning.
    if (upstream) logger.warn({ requestId, code: known.code, path: error.path, err: upstream }, 'provider error behind a client error');
    return;
  }
  if (isUnexpected(error)) logger.error({ requestId, path: error.path, err: error.originalError ?? error }, 'unexpected error in a resolver');
}
