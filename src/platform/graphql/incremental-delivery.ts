import { execute, isIncrementalResults } from '@graphql-tools/executor';
import { GraphQLDeferDirective, GraphQLStreamDirective } from '@graphql-tools/utils';
import {
  getNullableType,
  GraphQLError,
  isListType,
  Kind,
  visit,
  BREAK,
  type ASTVisitor,
  type DirectiveNode,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';

/** `@defer` on fragments and `@stream` on list fields, as graphql-js 17's incremental delivery spells them (and the executor reads them). */
export const INCREMENTAL_DIRECTIVES = [GraphQLDeferDirective, GraphQLStreamDirective];

/**
 * One payload of an operation delivered incrementally, in the format of `multipart/mixed; deferSpec=20220824` (what
 * Apollo Client's Defer20220824Handler, urql, graphql-ws and graphql-sse clients merge): the first has `data` and
 * `hasNext: true`, each later one `incremental` parts (a deferred fragment's `data`, or a stream's `items`, at their
 * `path`), the last `hasNext: false`.
 */
export interface IncrementalPayload extends ExecutionResult {
  hasNext: boolean;
  incremental?: readonly IncrementalPart[];
}

export interface IncrementalPart {
  data?: Record<string, unknown> | null;
  items?: readonly unknown[] | null;
  errors?: readonly GraphQLError[];
  path?: readonly (string | number)[];
  label?: string;
  extensions?: Record<string, unknown>;
}

const asked = new WeakMap<DocumentNode, boolean>();

/** Whether the document uses @defer or @stream anywhere; read once per parsed document (they are shared and immutable). */
export function asksForIncrementalDelivery(document: DocumentNode): boolean {
  let known = asked.get(document);
  if (known === undefined) {
    known = false;
    visit(document, {
      Directive(node) {
        if (node.name.value !== 'defer' && node.name.value !== 'stream') return undefined;
        known = true;
        return BREAK;
      },
    });
    asked.set(document, known);
  }
  return known;
}

/**
 * Runs an operation that uses @defer or @stream on @graphql-tools/executor (graphql-js 16 has no incremental
 * delivery; GraphQL Yoga and Hive Gateway run it the same way): one result when nothing ended up deferred (every
 * `if: false`), otherwise the payloads as they become ready. `cancel` is called when the client stops reading, so
 * the work its later payloads needed stops: the provider calls at the deadline's signal, and the payload awaited
 * then ends at once. The executor gets no signal: given one, it races it for every object it completes (promises
 * and CPU that BENCHMARKS.md measures), and a resolver it still runs after a cancellation sends nothing to the
 * provider, as the cancelled deadline aborts each call before it is sent.
 */
export async function executeIncrementally(
  args: ExecutionArgs,
  cancel: (reason: Error) => void,
): Promise<ExecutionResult | AsyncGenerator<IncrementalPayload>> {
  const result = await execute(args);
  if (!isIncrementalResults(result)) return result as ExecutionResult;
  return payloads(result.initialResult as IncrementalPayload, result.subsequentResults as AsyncGenerator<IncrementalPayload>, cancel);
}

function payloads(
  initial: IncrementalPayload,
  subsequent: AsyncGenerator<IncrementalPayload>,
  cancel: (reason: Error) => void,
): AsyncGenerator<IncrementalPayload> {
  let finished = false;
  let cancelled = false;
  let abandon: (reason: Error) => void = () => undefined;
  // Rejects when the client stops reading: the payload being awaited ends with it, whatever the executor still waits for.
  const abandoned = new Promise<never>((_resolve, reject) => {
    abandon = reject;
  });
  abandoned.catch(() => undefined);
  const stop = (): void => {
    if (finished || cancelled) return;
    cancelled = true;
    const reason = new Error('the client stopped reading the operation before its last payload');
    abandon(reason);
    cancel(reason);
  };
  const generator = (async function* () {
    try {
      yield initial;
      for await (const payload of joinedWithinATurn(subsequent, abandoned)) yield payload;
      finished = true;
    } catch (error) {
      // Cancelled, the payload awaited ends with the cancellation: nobody is left to read it.
      if (!cancelled) throw error;
    } finally {
      stop();
    }
  })();
  // An async generator's return waits for the payload it awaits, which may be the slow one the client left for: cancel at once.
  const returnWhenIdle = generator.return.bind(generator);
  generator.return = (value) => {
    stop();
    return returnWhenIdle(value);
  };
  return generator;
}

const NEXT_TURN = Symbol('the next turn of the event loop');

/**
 * The executor's later payloads, with those that become ready in the same turn of the event loop (provider answers
 * read together) joined into one: a client gets the same parts in fewer payloads, and the gateway writes fewer frames.
 */
async function* joinedWithinATurn(subsequent: AsyncGenerator<IncrementalPayload>, abandoned: Promise<never>): AsyncGenerator<IncrementalPayload> {
  // A pull still pending when the reader leaves rejects with `abandoned`; nobody is left to hear it.
  const pull = (): Promise<IteratorResult<IncrementalPayload>> => {
    const pulled = Promise.race([subsequent.next(), abandoned]);
    pulled.catch(() => undefined);
    return pulled;
  };
  let next = pull();
  try {
    for (;;) {
      const ready = await next;
      if (ready.done) return;
      let payload = ready.value;
      while (payload.hasNext) {
        next = pull();
        const more = await Promise.race([next, new Promise<typeof NEXT_TURN>((resolve) => setImmediate(resolve, NEXT_TURN))]);
        if (more === NEXT_TURN || more.done) break;
        payload = joined(payload, more.value);
      }
      yield payload;
      if (!payload.hasNext) return;
    }
  } finally {
    // A reader that left early: the executor's own generator ends too, as a for-await over it would end it.
    void subsequent.return(undefined).catch(() => undefined);
  }
}

function joined(earlier: IncrementalPayload, later: IncrementalPayload): IncrementalPayload {
  const incremental = [...(earlier.incremental ?? []), ...(later.incremental ?? [])];
  return incremental.length > 0 ? { incremental, hasNext: later.hasNext } : { hasNext: later.hasNext };
}

/**
 * The rules of incremental delivery graphql-js 16 does not know, so a misuse is refused before anything runs
 * (GRAPHQL_VALIDATION_FAILED), with the rule that was broken.
 */
export const INCREMENTAL_DELIVERY_RULES: ValidationRule[] = [incrementalDeliveryRule];

function incrementalDeliveryRule(context: ValidationContext): ASTVisitor {
  const labels = new Set<string>();
  let operation: string | undefined;
  const refuse = (message: string, node: DirectiveNode): void => context.reportError(new GraphQLError(message, { nodes: node }));
  return {
    OperationDefinition: {
      enter(node) {
        operation = node.operation;
      },
      leave() {
        operation = undefined;
      },
    },
    Directive(node) {
      const name = node.name.value;
      if (name !== 'defer' && name !== 'stream') return;
      // A subscription's events are one payload each (the fan-out shares them); in a fragment definition the operation is not known, and there they are ignored.
      if (operation === 'subscription') {
        refuse(`@${name} is not served in subscriptions: each event is one payload. Use @${name} in queries and mutations.`, node);
        return;
      }
      if (operation === 'mutation' && name === 'defer' && context.getParentType() === context.getSchema().getMutationType()) {
        refuse('@defer is not allowed on the root fields of a mutation: mutations run in order and answer together. Defer fields below them.', node);
        return;
      }
      const label = node.arguments?.find((argument) => argument.name.value === 'label')?.value;
      if (label?.kind === Kind.VARIABLE) refuse(`@${name}'s label must be a literal string, not a variable: the client matches payloads by it.`, node);
      if (label?.kind === Kind.STRING) {
        if (labels.has(label.value))
          refuse(`@${name}(label: "${label.value}") is used twice: every @defer and @stream label must be unique in the document.`, node);
        labels.add(label.value);
      }
      if (name === 'stream') {
        const field = context.getFieldDef();
        if (field && !isListType(getNullableType(field.type))) {
          refuse(`@stream is allowed on list fields only: ${context.getParentType()?.name ?? '?'}.${field.name} is ${String(field.type)}, not a list.`, node);
        }
        const initialCount = node.arguments?.find((argument) => argument.name.value === 'initialCount')?.value;
        if (initialCount?.kind === Kind.INT && Number(initialCount.value) < 0) {
          refuse(`@stream's initialCount must be 0 or more (the items in the first payload); it was ${initialCount.value}.`, node);
        }
      }
    },
  };
}
