import { context, createContextKey, trace, type Context, type Span } from '@opentelemetry/api';
import { isObjectType, responsePathAsArray, type GraphQLFieldResolver, type GraphQLResolveInfo, type GraphQLSchema } from 'graphql';
import { recordError, type Telemetry } from './telemetry';

/**
 * Spans for the resolver paths that reach the provider, and only those. Every resolver runs with a note of where
 * it is (its path and start time) in the async context; the first provider call made under it turns the note into
 * a span `resolve <Type.field>` that started when the resolver did, and the provider call becomes its child. A
 * resolver that only reads its parent's object or the cache leaves no span: a list of 500 transactions costs no
 * 500 spans.
 */
const RESOLVER = createContextKey('bankgraph.resolver');

interface PendingResolver {
  coordinate: string;
  path: string;
  parent: Context;
  startTime: number;
  span?: Span;
  /** Settled: a call it left running in the background is not its child any more. */
  done?: boolean;
}

/** Wraps the schema's resolvers in place (tracing on only; off, the schema is left as built). */
export function traceResolvers(schema: GraphQLSchema, telemetry: Telemetry): void {
  if (!telemetry.enabled) return;
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (field.resolve) field.resolve = noted(field.resolve, `${type.name}.${field.name}`);
    }
  }
}

function noted(resolve: GraphQLFieldResolver<unknown, unknown>, coordinate: string): GraphQLFieldResolver<unknown, unknown> {
  return (source, args, ctx, info: GraphQLResolveInfo) => {
    const parent = context.active();
    const pending: PendingResolver = { coordinate, path: responsePathAsArray(info.path).join('.'), parent, startTime: Date.now() };
    const finish = (): void => {
      pending.done = true;
      pending.span?.end();
    };
    let result: unknown;
    try {
      result = context.with(parent.setValue(RESOLVER, pending), resolve, undefined, source, args, ctx, info);
    } catch (error) {
      if (pending.span) recordError(pending.span, error);
      finish();
      throw error;
    }
    if (isPromiseLike(result)) {
      result.then(finish, (error: unknown) => {
        if (pending.span) recordError(pending.span, error);
        finish();
      });
    } else {
      finish();
    }
    return result;
  };
}

/**
 * The parent for a provider call made now: the span of the resolver it serves (made on first use), or whatever
 * span is active (a webhook, a job, a token refresh outside any resolver).
 */
export function providerCallParent(telemetry: Telemetry): Context {
  const active = context.active();
  const pending = active.getValue(RESOLVER) as PendingResolver | undefined;
  if (!pending || pending.done || !telemetry.tracer) return pending?.parent ?? active;
  pending.span ??= telemetry.tracer.startSpan(
    `resolve ${pending.coordinate}`,
    { startTime: pending.startTime, attributes: { 'graphql.field.path': pending.path, 'graphql.field.coordinate': pending.coordinate } },
    pending.parent,
  );
  return trace.setSpan(pending.parent, pending.span);
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}
