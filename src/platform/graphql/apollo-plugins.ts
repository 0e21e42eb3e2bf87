import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { isAnswerCacheable } from './answer-cacheability';
import { withAnswerExtensions } from './answer-extensions';
import { costLimitPlugin } from './cost-limit.plugin';
import { httpSubscriptionPlugin } from './http-subscription.plugin';
import type { OperationContext } from './operation-context';
import { takePartialFailures, withRequestId } from './operation-errors';
import { operationObserverPlugin } from './operation-observer.plugin';
import type { OperationLimits } from './operation-limits';
import type { OperationRecorder } from '../observability/operation-recorder';
import type { Logger } from '../observability/logger';

/** The pipeline's stages that Apollo runs for HTTP through its plugin hooks; WebSocket runs the same stages itself. */
export function pipelinePlugins(limits: OperationLimits, recorder: OperationRecorder, logger: Logger): ApolloServerPlugin<OperationContext>[] {
  return [
    errorsPlugin(),
    extensionsPlugin(),
    answerCachePlugin(),
    costLimitPlugin<OperationContext>(limits),
    httpSubscriptionPlugin<OperationContext>(),
    operationObserverPlugin(recorder, logger),
    // Its per-field hook costs on every field of every answer, for cache hints this gateway does not use.
    ApolloServerPluginCacheControlDisabled(),
  ];
}

/** A failed bank connection's error joins the answer at its path, and every error gets the request id. */
function errorsPlugin(): ApolloServerPlugin<OperationContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response, contextValue }) {
          if (response.body.kind !== 'single') return;
          const result = response.body.singleResult;
          const partial = takePartialFailures(contextValue);
          if (!result.errors && partial.length === 0) return;
          result.errors = withRequestId([...(result.errors ?? []), ...partial], contextValue.requestId);
        },
      };
    },
  };
}

/** What the resolvers noted for the answer (answer-extensions.ts) joins its `extensions`. */
function extensionsPlugin(): ApolloServerPlugin<OperationContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response, contextValue }) {
          if (response.body.kind !== 'single') return;
          response.body.singleResult = withAnswerExtensions(response.body.singleResult, contextValue);
        },
      };
    },
  };
}

/** Marks the operations whose answers the AnswerCache may keep: data-API reads only, and only without errors. */
function answerCachePlugin(): ApolloServerPlugin<OperationContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operation, contextValue }) {
          contextValue.answer.cacheable = operation !== undefined && isAnswerCacheable(schema, document, operation);
          contextValue.answer.operationName = operation?.name?.value;
        },
        async didEncounterErrors({ contextValue }) {
          contextValue.answer.cacheable = false;
        },
      };
    },
  };
}
