import 'reflect-metadata';
import { getIntrospectionQuery, parse, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { buildAppSchema } from '../../src/app/schema';
import { fragmentsOf, LIST_SIZE_ESTIMATE, operationCost, operationShape } from '../../src/platform/graphql/operation-cost';
import { OperationLimits } from '../../src/platform/graphql/operation-limits';

describe('operationCost', () => {
  let schema: GraphQLSchema;

  beforeAll(async () => {
    schema = await buildAppSchema();
  });

  const cost = (source: string, variables: Record<string, unknown> = {}): number => {
    const document = parse(source);
    const operation = document.definitions.find((definition): definition is OperationDefinitionNode => definition.kind === 'OperationDefinition')!;
    return operationCost(schema, operation, fragmentsOf(document.definitions), variables);
  };

  it('costs each object 1, leaves nothing, and multiplies inside lists', () => {
    expect(cost('{ __typename }')).toBe(0);
    expect(cost('{ viewer { accounts { id displayName } } }')).toBe(1 + 1);
    expect(cost('{ viewer { accounts { balance { current } } } }')).toBe(1 + 1 + LIST_SIZE_ESTIMATE * 1);
  });

  it('sizes a connection by `first`: literal, variable, variable default or argument default', () => {
    const page = (first: string) =>
      `query Q($n: Int, $m: Int = 7) { viewer { account(id: "a") { transactions(first: ${first}) { totalCount nodes { amount { amount } } } } } }`;
    // viewer 1 + account 1 + transactions 1 + nodes 1 + first × amount 1
    expect(cost(page('100'))).toBe(4 + 100);
    expect(cost(page('$n'), { n: 3 })).toBe(4 + 3);
    expect(cost(page('$m'))).toBe(4 + 7);
    expect(cost(page('$n'))).toBe(4 + 50);
    expect(cost(page('null'))).toBe(4 + 50);
  });

  it('sizes nodes(ids:) by its ids: a literal list, a variable, a single id coerced to a list', () => {
    const nodes = (ids: string) => `query Q($ids: [ID!]!) { nodes(ids: ${ids}) { ... on Account { balance { current } } } }`;
    // nodes 1 + ids × (the object 1 + balance 1), as account(id:) { balance { current } } costs 1 + 1 per id
    expect(cost(nodes('["a", "b", "c"]'))).toBe(1 + 3 * 2);
    expect(cost(nodes('$ids'), { ids: Array.from({ length: 100 }, (_, i) => String(i)) })).toBe(1 + 100 * 2);
    expect(cost(nodes('$ids'), { ids: 'a' })).toBe(1 + 2);
    expect(cost(nodes('"a"'))).toBe(1 + 2);
  });

  it('costs every id of nodes(ids:) at least 1 and at least what its own field costs, leaves-only selections included', () => {
    const ids = Array.from({ length: 100 }, (_, i) => String(i));
    expect(cost('query Q($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids })).toBe(1 + 100);
    expect(cost('query Q($ids: [ID!]!) { nodes(ids: $ids) { __typename } }', { ids })).toBe(1 + 100);
    const ownField = cost('{ payment(id: "p") { id refunds { id } } }');
    const throughNode = cost('{ nodes(ids: ["p"]) { ... on Payment { id refunds { id } } } }') - 1;
    expect(throughNode).toBeGreaterThanOrEqual(ownField);
    expect(cost('{ node(id: "p") { ... on Payment { id refunds { id } } } }')).toBe(ownField);
    // 17 aliases of 100 ids selecting only id: 17 × 101, no longer 17.
    const aliases = Array.from({ length: 17 }, (_, i) => `n${i}: nodes(ids: $ids) { id }`).join(' ');
    expect(cost(`query Q($ids: [ID!]!) { ${aliases} }`, { ids })).toBe(17 * 101);
  });

  it('costs fragments like the fields they stand for, and never loops on a cycle', () => {
    const inline = cost('{ viewer { accounts { balance { current } } } }');
    expect(cost('{ viewer { ...V } } fragment V on Viewer { accounts { ...A } } fragment A on Account { balance { current } }')).toBe(inline);
    expect(cost('{ viewer { ... on Viewer { accounts { balance { current } } } } }')).toBe(inline);
    expect(cost('{ viewer { ...A } } fragment A on Viewer { ...B } fragment B on Viewer { ...A }')).toBe(1);
  });

  it('stays fast on fragments that fan out exponentially', () => {
    const chain = Array.from({ length: 40 }, (_, i) => `fragment F${i} on Viewer { a: accounts { id } ...F${i + 1} b: accounts { id } ...F${i + 1} }`).join(
      ' ',
    );
    const started = performance.now();
    const total = cost(`{ viewer { ...F0 } } ${chain} fragment F40 on Viewer { accounts { id } }`);
    expect(performance.now() - started).toBeLessThan(200);
    expect(total).toBeGreaterThan(1e12);
  });

  it("prices GraphiQL's schema query under the default limit, so the playground works outside production", () => {
    expect(
      cost(
        getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true }),
      ),
    ).toBeLessThan(20_000);
  });

  it('counts the ids of node and nodes fields across aliases and fragments, and refuses more than 100 in one operation', () => {
    const shape = (source: string, variables: Record<string, unknown> = {}) => {
      const document = parse(source);
      const operation = document.definitions.find((definition): definition is OperationDefinitionNode => definition.kind === 'OperationDefinition')!;
      return { document, operation, shape: operationShape(schema, operation, fragmentsOf(document.definitions), variables) };
    };
    const ids = Array.from({ length: 100 }, (_, i) => String(i));
    const aliases = Array.from({ length: 17 }, (_, i) => `n${i}: nodes(ids: $ids) { id }`).join(' ');
    expect(shape(`query Q($ids: [ID!]!) { ${aliases} }`, { ids }).shape).toMatchObject({ nodeIds: 1700, largestIdList: 100 });
    expect(
      shape('query Q($ids: [ID!]!, $id: ID!) { a: node(id: $id) { id } b: node(id: $id) { id } ...N } fragment N on Query { nodes(ids: $ids) { id } }', {
        ids,
        id: 'x',
      }).shape,
    ).toMatchObject({ nodeIds: 102, largestIdList: 100 });
    expect(shape('{ viewer { accounts { id } } }').shape.nodeIds).toBe(0);

    const limits = new OperationLimits({ maxDepth: 15, maxAliases: 30, maxDirectives: 50, maxTokens: 10_000, maxCost: 20_000, maxBodyBytes: 1_000_000 }, false);
    const check = (source: string, variables: Record<string, unknown>) => {
      const { document, operation } = shape(source, variables);
      return limits.checkCost(schema, document, operation, variables);
    };
    const flood = check(`query Q($ids: [ID!]!) { ${aliases} }`, { ids });
    expect(flood?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'OPERATION_LIMIT', limit: 'maxNodeIds', max: 100 });
    expect(flood?.message).toBe(
      'node(id:) and nodes(ids:) take at most 100 ids in one operation, every field and alias counted; got 1700. Ask for the rest in another operation.',
    );
    expect(check('query Q($ids: [ID!]!) { nodes(ids: $ids) { id } node(id: "x") { id } }', { ids })?.extensions).toMatchObject({ limit: 'maxNodeIds' });
    expect(check('query Q($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids })).toBeUndefined();
    const one = check('query Q($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: [...ids, 'x'] });
    expect(one?.extensions).toMatchObject({ limit: 'maxNodeIds', field: 'ids' });
    expect(one?.message).toMatch(/^ids takes at most 100 ids; got 101\./);
  });
});
