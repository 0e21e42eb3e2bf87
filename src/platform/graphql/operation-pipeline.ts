import type { ApolloServerOptionsWithGateway } from '@apollo/server';
import {
  getOperationAST,
  GraphQLError,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { CompiledExecutor } from './compiled-executor';
import { withAnswerExtensions } from './answer-extensions';
import type { IncrementalPayload } from './incremental-delivery';
import { DocumentCache, requestError, type CheckedDocument } from './document-cache';
import { createErrorMasker, type ErrorMasker } from './error-masking';
import type { OperationContext } from './operation-context';
import { takePartialFailures, toGraphQLError, withRequestId } from './operation-errors';
import type { OperationLimits } from './operation-limits';
import { pipelinePlugins } from './apollo-plugins';
import type { DocumentRequest, PersistedDocuments } from './persisted/persisted-documents';
import type { Logger } from '../observability/logger';
import type { OperationRecorder } from '../observability/operation-recorder';

/** An operation ready to run: its checked document, the operation chosen in it, and its variables. */
export interface PreparedOperation {
  args: { schema: GraphQLSchema; document: DocumentNode; operationName: string | undefined; variableValues: Record<string, unknown> | undefined };
  operation: OperationDefinitionNode;
}

/** What the execute stage answers: one result, or (@defer, @stream) the payloads as they become ready. */
export type OperationResults = ExecutionResult | AsyncGenerator<IncrementalPayload>;

/** One result or payload as a transport writes it: errors formatted for the client, the resolvers' extensions added. */
export interface ClientResult {
  data?: unknown;
  errors?: readonly GraphQLFormattedError[];
  extensions?: Record<string, unknown>;
  hasNext?: boolean;
  incremental?: readonly ClientIncrementalPart[];
}

export interface ClientIncrementalPart {
  data?: unknown;
  items?: readonly unknown[] | null;
  errors?: readonly GraphQLFormattedError[];
  path?: readonly (string | number)[];
  label?: string;
  extensions?: Record<string, unknown>;
}

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

  /** Whether text, manifest documents or both are accepted (PERSISTED_DOCUMENTS), for a transport choosing how to name its own documents. */
  get persistedMode(): PersistedDocuments['mode'] {
    return this.deps.persisted.mode;
  }

  /** The text to run (undefined: none given); throws the domain error of a refused id, hash or text. */
  resolveDocument(request: DocumentRequest, fromPlayground: boolean, principalKey: string): Promise<string | undefined> {
    return this.deps.persisted.resolve(request, fromPlayground, principalKey);
  }

  /** Parsed and validated once per text (token, depth, alias and directive limits, introspection in production). */
  check(text: string): CheckedDocument {
    return this.documents.check(text);
  }

  /**
   * The document checked (check) and the operation to run chosen in it, for the transports that build their own
   * execution arguments (WebSocket, SSE, multipart); Apollo does the same for plain HTTP.
   */
  prepare(
    query: string,
    operationName: string | null | undefined,
    variables: Readonly<Record<string, unknown>> | null | undefined,
  ): PreparedOperation | { errors: readonly GraphQLError[] } {
    const checked = this.check(query);
    if ('errors' in checked) return { errors: checked.errors };
    const { document } = checked;
    const operation = getOperationAST(document, operationName);
    if (!operation) {
      const error = new GraphQLError('The document has no operation of that name (or several operations and no operationName).');
      return { errors: [requestError(error, 'OPERATION_RESOLUTION_FAILURE')] };
    }
    const variableValues = (variables ?? undefined) as Record<string, unknown> | undefined;
    return { args: { schema: this.schema, document, operationName: operationName ?? undefined, variableValues }, operation };
  }

  /**
   * The execute stage: a query runs compiled (graphql-jit) from its second run and mutations on graphql-js. The live
   * transports' stage list puts incremental delivery (@defer, @stream) in front of it (operation-stages.ts).
   */
  execute(args: ExecutionArgs): Promise<OperationResults> {
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
    return this.joinedErrors(
      errors?.map((error) => this.maskError(error.toJSON(), error)),
      context,
      requestId,
    );
  }

  /**
   * The error stage after masking, for every transport (Apollo masks in its formatError, then its errors plugin
   * calls this): the bank connections' failures joined, and the request id on every error.
   */
  joinedErrors(
    masked: readonly GraphQLFormattedError[] | undefined,
    context: OperationContext | undefined,
    requestId = context?.requestId,
  ): GraphQLFormattedError[] | undefined {
    const partial = takePartialFailures(context);
    if (!masked?.length && partial.length === 0) return undefined;
    return withRequestId([...(masked ?? []), ...partial], requestId);
  }

  /**
   * A result's errors as a streaming transport sends them (WebSocket, SSE, multipart): as clientErrors, and an error
   * without a path or a code is GraphQL refusing the request itself (e.g. a variable of the wrong type), not a
   * resolver's fault: BAD_USER_INPUT, as Apollo answers it over HTTP.
   */
  resultErrors(errors: readonly GraphQLError[] | undefined, context: OperationContext | undefined): GraphQLFormattedError[] | undefined {
    const requestErrors = errors?.map((error) =>
      error.path === undefined && error.extensions.code === undefined ? requestError(error, 'BAD_USER_INPUT') : error,
    );
    return this.clientErrors(requestErrors, context);
  }

  /**
   * The error stage for one result or payload of a streaming transport (WebSocket, SSE, multipart): resultErrors on
   * its errors and on each incremental part's, the bank connections' partial failures with the part that reported
   * them, the request id everywhere, and the extensions the resolvers noted.
   */
  clientResult(result: ExecutionResult | IncrementalPayload, context: OperationContext | undefined): ClientResult {
    const incremental = 'incremental' in result ? result.incremental : undefined;
    if (!incremental?.length) {
      const errors = this.resultErrors(result.errors, context);
      return withAnswerExtensions(errors ? { ...result, errors } : (result as ClientResult), context);
    }
    const requestId = context?.requestId;
    const parts = incremental.map((part, index): ClientIncrementalPart => {
      const errors = index === 0 ? this.clientErrors(part.errors, context) : this.clientErrors(part.errors, undefined, requestId);
      return errors ? { ...part, errors } : (part as ClientIncrementalPart);
    });
    return withAnswerExtensions({ ...(result as ClientResult), incremental: parts }, context);
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
      plugins: pipelinePlugins(
        { limits: this.deps.limits, joinedErrors: (masked, context) => this.joinedErrors(masked, context) },
        this.deps.recorder,
        this.deps.logger,
      ),
    };
  }
}
