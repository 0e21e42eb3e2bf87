import { createHash } from 'node:crypto';
import type { DocumentStore } from '@apollo/server';
import { LRUCache } from 'lru-cache';
import { GraphQLError, parse, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { OperationLimits } from './operation-limits';

/** `unvalidatable`: graphql-js threw while validating it, so Apollo, which does not catch that, must not be handed it. */
export type CheckedDocument = { document: DocumentNode } | { errors: readonly GraphQLError[]; unvalidatable?: true };

/** Distinct operation texts kept parsed and validated; clients send the same few over and over. */
const MAX_DOCUMENTS = 1_000;

/**
 * One parse and one validation per operation text, for both transports: the token limit (parse options), the
 * depth, alias and directive limits and the introspection rule (validation rules) are the same for HTTP and
 * WebSocket. Apollo reads it as its document store (keyed by the SHA-256 of the text, as Apollo keys it), the
 * WebSocket server by the text itself; a document checked on one transport is not checked again on the other, and
 * the one immutable DocumentNode is shared, so the compiled executor compiles it once too.
 */
export class DocumentCache {
  private readonly byText = new LRUCache<string, CheckedDocument>({ max: MAX_DOCUMENTS });
  private readonly byHash = new LRUCache<string, DocumentNode>({ max: MAX_DOCUMENTS });

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly limits: OperationLimits,
  ) {}

  /** The text's document, or why it is refused, with the codes Apollo gives the same refusals. */
  check(text: string): CheckedDocument {
    let checked = this.byText.get(text);
    if (checked) return checked;
    const hash = sha256(text);
    const known = this.byHash.get(hash);
    checked = known ? { document: known } : this.parseAndValidate(text);
    this.byText.set(text, checked);
    if ('document' in checked && !known) this.byHash.set(hash, checked.document);
    return checked;
  }

  /** Apollo's `documentStore`: it asks before parsing, and stores what it parsed and validated. */
  asDocumentStore(): DocumentStore {
    // Apollo prefixes its keys with a hash of the schema, which never changes here.
    const hashOf = (key: string): string => key.slice(key.lastIndexOf(':') + 1);
    return {
      get: async (key) => this.byHash.get(hashOf(key)),
      set: async (key, document) => {
        this.byHash.set(hashOf(key), document);
      },
      delete: async (key) => {
        this.byHash.delete(hashOf(key));
      },
    };
  }

  private parseAndValidate(text: string): CheckedDocument {
    let document: DocumentNode;
    try {
      document = parse(text, this.limits.parseOptions);
    } catch (error) {
      const syntax = error instanceof GraphQLError ? error : new GraphQLError('The operation could not be parsed.');
      return { errors: [requestError(syntax, 'GRAPHQL_PARSE_FAILED')] };
    }
    let errors: readonly GraphQLError[];
    try {
      errors = validate(this.schema, document, this.limits.allValidationRules);
    } catch (error) {
      // graphql-js's one-field-per-subscription rule evaluates @skip and @include as it validates, and throws on one
      // without its `if`, before the rule that would have said so.
      const thrown = error instanceof GraphQLError ? error : new GraphQLError('The operation could not be validated.');
      return { errors: [requestError(thrown, 'GRAPHQL_VALIDATION_FAILED')], unvalidatable: true };
    }
    if (errors.length > 0) return { errors: errors.map((error) => requestError(error, 'GRAPHQL_VALIDATION_FAILED')) };
    return { document };
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Tags an error GraphQL raised about the request itself with the code Apollo gives it, for the same masking. */
export function requestError(error: GraphQLError, code: string): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    // Kept so masking sees where the error came from, as it does for Apollo's.
    originalError: error.originalError,
    extensions: { ...error.extensions, code },
  });
}
