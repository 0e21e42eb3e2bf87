import { execute, GraphQLError, GraphQLObjectType, GraphQLSchema, GraphQLString, parse, type DocumentNode, type ExecutionResult } from 'graphql';
import { CompiledExecutor } from '../../src/platform/graphql/compiled-executor';
import { BadUserInputError } from '../../src/platform/errors/gateway-errors';

/** A two-field schema whose resolvers are given as plain functions of the arguments. */
function makeExecutableSchemaless(resolvers: { hello: (args: { name?: string }) => string; refuse: () => string }): GraphQLSchema {
  return new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: {
        hello: { type: GraphQLString, args: { name: { type: GraphQLString } }, resolve: (_root, args: { name?: string }) => resolvers.hello(args) },
        refuse: { type: GraphQLString, resolve: () => resolvers.refuse() },
      },
    }),
  });
}

const schema = makeExecutableSchemaless({
  hello: (args: { name?: string }) => `hello ${args.name ?? 'you'}`,
  refuse: () => {
    throw new BadUserInputError('no, not that', 'name');
  },
});

type Request = Parameters<CompiledExecutor['execute']>[0];

function request(query: string, variables?: Record<string, unknown>, operationName?: string): { document: DocumentNode; ctx: Request } {
  const document = parse(query);
  const operations = document.definitions.filter((d) => d.kind === 'OperationDefinition');
  const operation =
    operationName === undefined ? (operations.length === 1 ? operations[0] : undefined) : operations.find((d) => d.name?.value === operationName);
  return { document, ctx: { document, operation, operationName: null, context: {}, request: { query, variables, operationName } } as unknown as Request };
}

/** The executor's second answer (the first runs on graphql-js; the second is compiled) and graphql-js's. */
async function both(query: string, variables?: Record<string, unknown>, operationName?: string): Promise<[ExecutionResult, ExecutionResult]> {
  const { document, ctx } = request(query, variables, operationName);
  const executor = new CompiledExecutor(schema);
  await executor.execute(ctx);
  const compiled = await executor.execute(ctx);
  const interpreted = await execute({ schema, document, variableValues: variables, operationName, contextValue: {} });
  return [compiled, interpreted];
}

describe('CompiledExecutor (graphql-jit behind Apollo)', () => {
  it('answers a query as graphql-js does', async () => {
    const [compiled, interpreted] = await both('query Q($n: String) { hello(name: $n) }', { n: 'ann' });
    expect(compiled).toEqual(interpreted);
    expect(compiled.data).toEqual({ hello: 'hello ann' });
  });

  it('gives resolver errors as graphql-js GraphQLErrors carrying the original error and its code', async () => {
    const [compiled] = await both('{ refuse }');
    const error = compiled.errors![0]!;
    expect(error).toBeInstanceOf(GraphQLError);
    expect(error.originalError).toBeInstanceOf(BadUserInputError);
    expect(error.extensions.code).toBe('BAD_USER_INPUT');
    expect(error.path).toEqual(['refuse']);
    expect(error.locations).toEqual([{ line: 1, column: 3 }]);
  });

  it('refuses a bad variable with graphql-js error and no data (Apollo answers 400)', async () => {
    const [compiled, interpreted] = await both('query Q($n: String) { hello(name: $n) }', { n: 5 });
    expect(compiled).toEqual(interpreted);
    expect(compiled.data).toBeUndefined();
  });

  it('leaves an operation Apollo could not pick (an empty name) to graphql-js, which refuses it', async () => {
    const [compiled, interpreted] = await both('query Q { hello }', undefined, '');
    expect(compiled.errors?.[0]?.message).toBe('Unknown operation named "".');
    expect(compiled).toEqual(interpreted);
  });
});
