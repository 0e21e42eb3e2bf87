import 'reflect-metadata';
import { getIntrospectionQuery, parse, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { buildAppSchema } from '../../src/app/schema';
import { fragmentsOf, LIST_SIZE_ESTIMATE, operationCost } from '../../src/platform/graphql/operation-cost';

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
    // nodes 1 + ids × (balance 1)
    expect(cost(nodes('["a", "b", "c"]'))).toBe(1 + 3);
    expect(cost(nodes('$ids'), { ids: Array.from({ length: 100 }, (_, i) => String(i)) })).toBe(1 + 100);
    expect(cost(nodes('$ids'), { ids: 'a' })).toBe(1 + 1);
    expect(cost(nodes('"a"'))).toBe(1 + 1);
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
});
