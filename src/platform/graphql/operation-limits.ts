import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import {
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  specifiedRules,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ParseOptions,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { INCREMENTAL_DELIVERY_RULES } from './incremental-delivery';
import type { OperationLimitsConfig } from '../config/config';
import { MAX_NODE_IDS, MAX_NODE_IDS_PER_OPERATION } from './node/node-limits';
import { fragmentsOf, operationShape } from './operation-cost';

/** Which limit refused an operation; clients see it as `extensions.limit`. */
export type LimitName = 'maxDepth' | 'maxAliases' | 'maxDirectives' | 'maxTokens' | 'maxCost' | 'maxNodeIds' | 'maxBodyBytes';

/** The reason every limit refusal carries, beside code BAD_USER_INPUT. */
export const OPERATION_LIMIT_REASON = 'OPERATION_LIMIT';

/**
 * A refusal the client can act on: code BAD_USER_INPUT (the operation as written will never be accepted, so
 * retrying is pointless), which limit, and its value.
 */
export function operationLimitError(limit: LimitName, message: string, max: number, httpStatus = 400, field?: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code: 'BAD_USER_INPUT', reason: OPERATION_LIMIT_REASON, limit, max, ...(field === undefined ? {} : { field }), http: { status: httpStatus } },
  });
}

/**
 * The limits as graphql validation rules and parse options, built once and used by both transports: Apollo's
 * `validationRules`/`parseOptions` for HTTP, and the graphql-ws `onSubscribe` hook for WebSocket.
 */
export class OperationLimits {
  /** Depth, aliases and directives (graphql-armor): Apollo's `validationRules` (it adds the introspection rule itself). */
  readonly validationRules: ValidationRule[];
  /** graphql-js stops lexing after maxTokens, before any AST is built, so a huge document costs little to refuse. */
  readonly parseOptions: ParseOptions;

  constructor(
    readonly config: OperationLimitsConfig,
    readonly production: boolean,
  ) {
    const reject = (limit: LimitName, max: number) => [
      (context: ValidationContext | null, error: GraphQLError) => {
        // graphql-armor words every refusal as a syntax error; the limit's own sentence is what helps the client.
        context?.reportError(operationLimitError(limit, error.message.replace(/^Syntax Error:\s*/, ''), max));
      },
    ];
    this.validationRules = [
      // Depth counts fields, not fragment spreads, and counts introspection too: GraphiQL's schema query is 15 deep,
      // and a `__type { fields { type { fields … } } }` chain is as expensive as any other.
      maxDepthRule({
        n: config.maxDepth,
        flattenFragments: true,
        ignoreIntrospection: false,
        exposeLimits: true,
        propagateOnRejection: false,
        onReject: reject('maxDepth', config.maxDepth),
      }),
      maxAliasesRule({ n: config.maxAliases, exposeLimits: true, propagateOnRejection: false, onReject: reject('maxAliases', config.maxAliases) }),
      maxDirectivesRule({ n: config.maxDirectives, exposeLimits: true, propagateOnRejection: false, onReject: reject('maxDirectives', config.maxDirectives) }),
      // Not limits, but rules every document passes on every transport, so they travel with them.
      ...INCREMENTAL_DELIVERY_RULES,
    ];
    this.parseOptions = { maxTokens: config.maxTokens };
  }

  /** Every rule a WebSocket operation must pass: what Apollo applies over HTTP, spelled out. */
  get allValidationRules(): ValidationRule[] {
    return [...specifiedRules, ...this.validationRules, ...(this.production ? [NoSchemaIntrospectionCustomRule] : [])];
  }

  /** The cost or node-id refusal, or undefined when the operation is affordable. */
  checkCost(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation: OperationDefinitionNode,
    variables: Record<string, unknown> | undefined,
  ): GraphQLError | undefined {
    const { cost, nodeIds, largestIdList } = operationShape(schema, operation, fragmentsOf(document.definitions), variables ?? {});
    if (largestIdList > MAX_NODE_IDS) {
      // The resolver's own refusal, given before any field runs: the other fields would otherwise load their ids.
      return operationLimitError(
        'maxNodeIds',
        `ids takes at most ${MAX_NODE_IDS} ids; got ${largestIdList}. Ask for the rest in another operation.`,
        MAX_NODE_IDS,
        400,
        'ids',
      );
    }
    if (nodeIds > MAX_NODE_IDS_PER_OPERATION) {
      return operationLimitError(
        'maxNodeIds',
        `node(id:) and nodes(ids:) take at most ${MAX_NODE_IDS_PER_OPERATION} ids in one operation, every field and alias counted; got ${nodeIds}. ` +
          'Ask for the rest in another operation.',
        MAX_NODE_IDS_PER_OPERATION,
      );
    }
    if (cost <= this.config.maxCost) return undefined;
    return operationLimitError(
      'maxCost',
      `The operation's estimated cost is ${Number.isFinite(cost) ? Math.round(cost) : 'unbounded'}, above the limit of ${this.config.maxCost}. ` +
        'Ask for fewer items (a smaller `first`, fewer aliases) or split it into several operations.',
      this.config.maxCost,
    );
  }
}

/** graphql-js's own wording when maxTokens stops the parser. */
export function isTokenLimitMessage(message: string): boolean {
  return /Document contains more that? \d+ tokens/i.test(message);
}

/** "Did you mean …?" hints help an attacker map a hidden schema; production drops them (graphql-js has no switch). */
export function withoutSuggestions(message: string): string {
  return message.replace(/\s*Did you mean [^?]*\?/g, '');
}
