import type { ApolloServerOptionsWithGateway } from '@apollo/server';
import { getOperationAST, type ExecutionArgs, type ExecutionResult, type GraphQLError, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { CompiledExecutor } from './compiled-executor';
import { DocumentCache, type CheckedDocument } from './document-cache';
import { createErrorMasker, type ErrorMasker } from './error-masking';
import type { OperationContext } from './operation-context';
import { takePartialFailures, toGraphQLError, withRequestId } from './operation-errors';
import type { OperationLimits } from './operation-limits';
import { pipelinePlugins } from './apollo-plugins';
import type { DocumentRequest, PersistedDocuments } from './persisted/persisted-documents';
import type { Logger } from '../observability/logger';
import type { OperationRecorder } from '../observability/operation-recorder';

export interface OperationPipelineDeps {
  schema: GraphQLSchema;
  limits: OperationLimits;
  /** Persisted documents and APQ: the manifest, the shared APQ store, PERSISTED_DOCUMENTS. */
  persisted: PersistedDocuments;
  recorder: OperationRecorder;
  logger: Logger;
  production: boolean;
}

/**
 * The stages every GraphQL operation goes through, written once for HTTP and WebSocket: document resolution
 * (persisted documents, APQ), the token limit with parsing and validation (one DocumentCache, so one parse and one
 * validation per text whichever transport brought it), depth, alias and cost limits, the compiled executor
 * (graphql-jit for queries), masking, partial failures and request ids on errors, and the operation record.
 * Apollo Server runs them for HTTP (its options and plugins below, besides its CSRF prevention and content
 * negotiation); the graphql-ws server (src/platform/live) calls them from its hooks.
 */
export class OperationPipeline {
  readonly documents: DocumentCache;
  readonly executor: CompiledExecutor;
  readonly maskError: ErrorMasker;

  constructor(private readonly deps: OperationPipelineDeps) {
    this.documents = new DocumentCache(deps.schema, deps.limits);
    this.executor = new CompiledExecutor(deps.schema);
    this.maskError = createErrorMasker({ production: deps.production });
  }

  get schema(): GraphQLSchema {
    return this.deps.schema;
  }

  get limits(): OperationLimits {
    return this.deps.limits;
  }

  /** The text to run (undefined: none given); throws the domain error of a refused id, hash or text. */
  resolveDocument(request: DocumentRequest, fromPlayground: boolean, principalKey: string): Promise<string | undefined> {
    return this.deps.persisted.resolve(request, fromPlayground, principalKey);
  }

  /** Parsed and validated once per text (token, depth, alias and directive limits, introspection in production). */
  check(text: string): CheckedDocument {
    return this.documents.check(text);
  }

  /** A query runs compiled (graphql-jit) from its second run; mutations on graphql-js. */
  execute(args: ExecutionArgs): Promise<ExecutionResult> {
    return this.executor.executeArgs(args);
  }

  /** The cost limit, once the operation and its variables are known. */
  checkCost(args: ExecutionArgs): GraphQLError | undefined {
    const operation = getOperationAST(args.document, args.operationName);
    if (!operation) return undefined;
    return this.deps.limits.checkCost(this.deps.schema, args.document, operation, args.variableValues ?? undefined);
  }

  /** Errors as the client sees them: masked, then the bank connections' failures, then the request id on each. */
  clientErrors(
    errors: readonly GraphQLError[] | undefined,
    context: OperationContext | undefined,
    requestId = context?.requestId,
  ): GraphQLFormattedError[] | undefined {
    const partial = takePartialFailures(context);
    if (!errors?.length && partial.length === 0) return undefined;
    const masked = (errors ?? []).map((error) => this.maskError(error.toJSON(), error));
    return withRequestId([...masked, ...partial], requestId);
  }

  /** A refusal before execution (a domain error or a GraphQL one) as the GraphQL error the masker expects. */
  refusal(error: unknown): GraphQLError {
    return toGraphQLError(error);
  }

  /** Apollo's share of the pipeline: the executor, the document cache, the limits, masking and the plugins. */
  apolloOptions(): Pick<
    ApolloServerOptionsWithGateway<OperationContext>,
    'gateway' | 'documentStore' | 'validationRules' | 'parseOptions' | 'formatError' | 'plugins'
  > {
    return {
      gateway: this.executor.asGateway(),
      documentStore: this.documents.asDocumentStore(),
      validationRules: this.deps.limits.validationRules,
      parseOptions: this.deps.limits.parseOptions,
      formatError: this.maskError,
      plugins: pipelinePlugins(this.deps.limits, this.deps.recorder, this.deps.logger),
    };
  }
}
