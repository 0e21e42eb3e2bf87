import { GraphQLError, GraphQLObjectType, GraphQLSchema, GraphQLString, type ExecutionArgs } from 'graphql';
import { OperationLimits } from '../../../../src/platform/graphql/operation-limits';
import { OperationPipeline } from '../../../../src/platform/graphql/operation-pipeline';
import type { PersistedDocuments } from '../../../../src/platform/graphql/persisted/persisted-documents';
import { createOperationContext } from '../../../../src/platform/graphql/operation-context';
import { OperationStages, type LiveOperation, type OperationStage } from '../../../../src/platform/live/operation-stages';
import type { Logger } from '../../../../src/platform/observability/logger';
import type { OperationRecorder } from '../../../../src/platform/observability/operation-recorder';
import { principalKey } from '../../../../src/platform/http/principal-key';

const LIMITS = { maxDepth: 10, maxAliases: 10, maxDirectives: 10, maxTokens: 1_000, maxCost: 1_000, maxBodyBytes: 100_000 };
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined } as unknown as Logger;

function pipeline(): OperationPipeline {
  const schema = new GraphQLSchema({ query: new GraphQLObjectType({ name: 'Query', fields: { hello: { type: GraphQLString, resolve: () => 'world' } } }) });
  return new OperationPipeline({
    schema,
    limits: new OperationLimits(LIMITS, false),
    persisted: { mode: 'text', resolve: (request: { query?: string }) => Promise.resolve(request.query) } as unknown as PersistedDocuments,
    recorder: { record: () => undefined } as unknown as OperationRecorder,
    logger: silent,
    production: true,
  });
}

function operation(query: string): LiveOperation {
  const principal = { kind: 'anonymous' } as const;
  return {
    requestId: 'req-1',
    transport: 'ws',
    started: performance.now(),
    principal: 'anonymous',
    principalKey: principalKey(principal, () => '127.0.0.1'),
    document: { query },
    fromOwnPage: false,
    allowanceSpent: true,
    onConnection: 0,
    mutationsAllowed: true,
    endedBecause: () => undefined,
    query,
  };
}

/** A stage that notes each of its hooks as it runs, and refuses at admission when told to. */
function noting(name: string, seen: string[], refuse = false): OperationStage {
  return {
    admit: (live) => {
      seen.push(`${name}.admit`);
      if (!live.prepared) {
        // The first stage stands in for parsing here, so the others see a prepared operation.
        live.prepared = pipeline().prepare(live.query!, undefined, undefined) as LiveOperation['prepared'];
      }
      return refuse ? [new GraphQLError(`${name} says no`, { extensions: { code: 'FORBIDDEN' } })] : undefined;
    },
    context: () => void seen.push(`${name}.context`),
    execute: async (_live, _args, run) => {
      seen.push(`${name}.execute:before`);
      const result = await run();
      seen.push(`${name}.execute:after`);
      return result;
    },
    sent: () => void seen.push(`${name}.sent`),
    finish: (_live, forced) => void seen.push(`${name}.finish:${forced ?? 'ended'}`),
  };
}

describe('OperationStages: the stage list every live transport runs', () => {
  it('runs each stage of the list at its point, in list order, the first wrapping execution outermost', async () => {
    const seen: string[] = [];
    const stages = new OperationStages([noting('first', seen), noting('second', seen)], pipeline(), silent);
    const live = operation('{ hello }');
    const admitted = await stages.admit(live);
    if ('errors' in admitted) throw new Error('refused');
    const context = stages.context(
      live,
      createOperationContext({ principal: { kind: 'anonymous' }, requestId: live.requestId, cacheMode: 'use', logger: silent }),
    );
    const result = await stages.execute(live, { ...admitted.args, contextValue: context } as ExecutionArgs);
    if (Symbol.asyncIterator in result) throw new Error('streamed');
    expect(stages.format(live, result, context)).toEqual({ data: { hello: 'world' } });
    stages.finish(live);
    expect(seen).toEqual([
      'first.admit',
      'second.admit',
      'first.context',
      'second.context',
      'first.execute:before',
      'second.execute:before',
      'second.execute:after',
      'first.execute:after',
      'first.sent',
      'second.sent',
      'first.finish:ended',
      'second.finish:ended',
    ]);
  });

  it('stops admission at the first stage that refuses, and answers its errors with the request id', async () => {
    const seen: string[] = [];
    const stages = new OperationStages([noting('first', seen, true), noting('second', seen)], pipeline(), silent);
    const live = operation('{ hello }');
    const admitted = await stages.admit(live);
    expect('errors' in admitted).toBe(true);
    const refused = stages.refused(live, (admitted as { errors: readonly GraphQLError[] }).errors);
    expect(refused.errors).toEqual([expect.objectContaining({ message: 'first says no', extensions: { code: 'FORBIDDEN', requestId: 'req-1' } })]);
    stages.finish(live, 'aborted');
    expect(seen).toEqual(['first.admit', 'first.sent', 'second.sent', 'first.finish:aborted', 'second.finish:aborted']);
  });
});
