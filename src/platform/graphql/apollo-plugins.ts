import type { ApolloServerPlugin } from '@apollo/server';
import type { GraphQLFormattedError } from 'graphql';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { isAnswerCacheable } from './answer-cacheability';
import { withAnswerExtensions } from './answer-extensions';
import { costLimitPlugin } from './cost-limit.plugin';
import { httpSubscriptionPlugin } from './http-subscription.plugin';
import type { OperationContext } from './operation-context';
import { operationObserverPlugin } from './operation-observer.plugin';
import type { OperationLimits } from './operation-limits';
import type { OperationRecorder } from '../observability/operation-recorder';
import type { Logger } from '../observability/logger';

/** What the plugins call of the operation pipeline (operation-pipeline.ts), the same functions the live transports' stages call. */
export interface ApolloStages {
  limits: OperationLimits;
  joinedErrors(masked: readonly GraphQLFormattedError[] | undefined, context: OperationContext): GraphQLFormattedError[] | undefined;
}

/** The pipeline's stages that Apollo runs for HTTP through its plugin hooks; WebSocket runs the same stages itself. */
export function pipelinePlugins(stages: ApolloStages, recorder: OperationRecorder, logger: Logger): ApolloServerPlugin<OperationContext>[] {
  return [
    errorsPlugin(stages.joinedErrors),
    extensionsPlugin(),
    answerCachePlugin(),
    costLimitPlugin<OperationContext>(stages.limits),
    httpSubscriptionPlugin<OperationContext>(),
    operationObserverPlugin(recorder, logger),
    // Its per-field hook costs on every field of every answer, for cache hints this gateway does not use.
    ApolloServerPluginCacheControlDisabled(),
  ];
}

/** The pipeline's error stage on Apollo's masked errors: a failed bank connection's error joins them, and every error gets the request id. */
function errorsPlugin(joinedErrors: ApolloStages['joinedErrors']): ApolloServerPlugin<OperationContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response, contextValue }) {
          if (response.body.kind !== 'single') return;
          const result = response.body.singleResult;
          const errors = joinedErrors(result.errors, contextValue);
          if (errors) result.errors = errors;
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
