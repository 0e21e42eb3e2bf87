import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import type { OperationLimits } from './operation-limits';

/**
 * The cost limit over HTTP. It runs once the operation is resolved, because the cost depends on the variables
 * (`first: $n`), which validation rules never see. Throwing here stops the operation before any resolver runs;
 * the error asks for HTTP 400 through `extensions.http`.
 */
export function costLimitPlugin<TContext extends BaseContext>(limits: OperationLimits): ApolloServerPlugin<TContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operation, request }) {
          const refusal = operation && limits.checkCost(schema, document, operation, request.variables);
          if (refusal) throw refusal;
        },
      };
    },
  };
}
