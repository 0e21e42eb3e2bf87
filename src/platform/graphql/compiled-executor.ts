import type { ApolloServerOptionsWithGateway } from '@apollo/server';
import {
  execute,
  getOperationAST,
  GraphQLError,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { getVariableValues } from 'graphql/execution/values';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';

type GatewayInterface = ApolloServerOptionsWithGateway<object>['gateway'];
type GatewayExecutor = NonNullable<Awaited<ReturnType<GatewayInterface['load']>>['executor']>;

/**
 * Queries run as JavaScript compiled once per parsed document (graphql-jit) instead of being interpreted field by
 * field by graphql-js, whose per-field machinery (executeField, completeValue, getArgumentValues, isPromise) is paid
 * again for every field of a large answer.
 *
 * One parsed document is kept per query text for both transports (DocumentCache, Apollo's document store), so a
 * WeakMap keyed by that document caches the compiled form for exactly as long as the text is kept: no second bound
 * to tune. HTTP (through Apollo's gateway hook) and WebSocket (graphql-ws's `execute`) run queries here alike. Mutations (serial, and
 * rare) and anything the compiler refuses run on graphql-js as before. Variables are coerced by graphql-js first so
 * a bad variable is refused with the same error and HTTP 400 as without the compiler. A document is compiled the
 * second time it runs, not the first: compiling costs more than executing once, and a client sending a stream of
 * distinct queries should not make the gateway compile each of them.
 */
export class CompiledExecutor {
  /** 'seen': run once on graphql-js; null: the compiler refused it. */
  private readonly compiled = new WeakMap<DocumentNode, Map<string, CompiledQuery | null | 'seen'>>();

  constructor(private readonly schema: GraphQLSchema) {}

  readonly execute: GatewayExecutor = (request) =>
    // Typed as always present, but undefined when Apollo could not pick the operation (several, none named): then
    // graphql-js's execute gives the error Apollo expects to answer with.
    this.run(
      request.document,
      request.operation as typeof request.operation | undefined,
      request.request.operationName ?? undefined,
      request.request.variables ?? {},
      request.context,
    );

  /** graphql-ws's `execute` (queries and mutations; subscriptions go through `subscribe`). */
  readonly executeArgs = (args: ExecutionArgs): Promise<ExecutionResult> => {
    const operationName = args.operationName ?? undefined;
    const operation = getOperationAST(args.document, operationName) ?? undefined;
    return this.run(args.document, operation, operationName, args.variableValues ?? {}, args.contextValue);
  };

  private async run(
    document: DocumentNode,
    operation: OperationDefinitionNode | undefined,
    operationName: string | undefined,
    variables: Record<string, unknown>,
    context: unknown,
  ): Promise<ExecutionResult> {
    const query = operation?.operation === 'query' ? this.compiledFor(document, operationName) : null;
    if (!operation || !query) return execute({ schema: this.schema, document, contextValue: context, variableValues: variables, operationName });
    const coerced = getVariableValues(this.schema, operation.variableDefinitions ?? [], variables);
    if (coerced.errors) return { errors: coerced.errors };
    return withStandardErrors(await query.query(undefined, context, variables));
  }

  /** The gateway hook Apollo Server offers for replacing its executor; the schema never changes at run time. */
  asGateway(): GatewayInterface {
    return {
      onSchemaLoadOrUpdate: (callback) => {
        callback({ apiSchema: this.schema, coreSupergraphSdl: '' });
        return () => undefined;
      },
      load: async () => ({ executor: this.execute }),
      stop: async () => undefined,
    };
  }

  private compiledFor(document: DocumentNode, operationName: string | undefined): CompiledQuery | null {
    let byName = this.compiled.get(document);
    if (!byName) {
      byName = new Map();
      this.compiled.set(document, byName);
    }
    const key = operationName ?? '';
    const known = byName.get(key);
    if (known === undefined) {
      byName.set(key, 'seen');
      return null;
    }
    if (known !== 'seen') return known;
    const result = compileQuery(this.schema, document, operationName);
    const query = isCompiledQuery(result) ? result : null;
    byName.set(key, query);
    return query;
  }
}

/**
 * graphql-jit's errors borrow graphql-js's prototype but leave `extensions` undefined, and Apollo and the error
 * masker read `error.extensions.code`: each becomes a graphql-js GraphQLError with the same message, path,
 * locations and original error, so masking decides by origin exactly as it does for graphql-js's own.
 */
function withStandardErrors(result: ExecutionResult): ExecutionResult {
  if (!result.errors?.length) return result;
  const errors = result.errors.map((error) => {
    const standard = new GraphQLError(error.message, { path: error.path, originalError: error.originalError ?? undefined, extensions: error.extensions });
    (standard as { locations: GraphQLError['locations'] }).locations = error.locations;
    return standard;
  });
  return { ...result, errors };
}
