import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isInterfaceType,
  isLeafType,
  isListType,
  Kind,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  valueFromASTUntyped,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/**
 * What an operation may cost the gateway, estimated before it runs: every object in the answer costs 1 (leaves are
 * free: they come with their object), and a list multiplies what is selected inside it — by `first` for a paginated
 * connection (`transactions(first: 100) { nodes { … } }` is 100 nodes), by the number of ids for a list fetched by
 * its `ids` argument (`nodes(ids: [...])`), by LIST_SIZE_ESTIMATE for any other list. An item fetched by its id
 * costs 1 besides what is selected in it, as the type's own field (`payment(id:) { … }`) costs: selecting only `id`
 * of 100 ids costs 100, not nothing.
 *
 * graphql-armor's cost rule reads `first` only when it is written as a literal, so `transactions(first: $n)` would
 * cost as one item; this one is computed with the request's variables (and the argument's default when it is
 * omitted), which is why it runs once variables are known rather than as a cached validation rule.
 */
export const LIST_SIZE_ESTIMATE = 10;

export function operationCost(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  variables: Readonly<Record<string, unknown>> = {},
): number {
  return operationShape(schema, operation, fragments, variables).cost;
}

/**
 * What an operation weighs: its cost, how many ids it names through `Node` fields (node(id:), nodes(ids:)) in all,
 * and the most of them in one field.
 */
export interface OperationShape {
  cost: number;
  nodeIds: number;
  largestIdList: number;
}

const NOTHING: OperationShape = { cost: 0, nodeIds: 0, largestIdList: 0 };
const ONE: OperationShape = { cost: 1, nodeIds: 0, largestIdList: 0 };

function add(a: OperationShape, b: OperationShape, times = 1): OperationShape {
  return { cost: a.cost + times * b.cost, nodeIds: a.nodeIds + times * b.nodeIds, largestIdList: Math.max(a.largestIdList, b.largestIdList) };
}

export function operationShape(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  variables: Readonly<Record<string, unknown>> = {},
): OperationShape {
  const root = schema.getRootType(operation.operation);
  if (!root) return NOTHING;
  const variableDefaults = new Map<string, unknown>();
  for (const definition of operation.variableDefinitions ?? []) {
    if (definition.defaultValue) variableDefaults.set(definition.variable.name.value, valueFromASTUntyped(definition.defaultValue) ?? undefined);
  }
  // Fragments are costed once per (fragment, enclosing page size), for a multiplier of 1: a chain of fragments each
  // spreading the next twice would otherwise take exponential time to cost.
  const fragmentCosts = new Map<string, OperationShape>();
  const inProgress = new Set<string>();

  function pageSizeOf(field: GraphQLField<unknown, unknown>, node: FieldNode): number | undefined {
    const definition = field.args.find((arg) => arg.name === 'first');
    if (!definition) return undefined;
    const given = node.arguments?.find((arg) => arg.name.value === 'first')?.value;
    let value: unknown = definition.defaultValue;
    if (given?.kind === Kind.INT) value = Number.parseInt(given.value, 10);
    else if (given?.kind === Kind.VARIABLE) {
      const name = given.name.value;
      value = name in variables ? variables[name] : variableDefaults.has(name) ? variableDefaults.get(name) : definition.defaultValue;
    } else if (given?.kind === Kind.NULL) value = definition.defaultValue;
    // The resolver applies the same default; anything unusable is refused there, so it costs nothing extra here.
    if (value === null || value === undefined) value = definition.defaultValue;
    return typeof value === 'number' && Number.isFinite(value) ? Math.max(0, Math.floor(value)) : LIST_SIZE_ESTIMATE;
  }

  /** How many ids a field that answers one item per id (`nodes(ids:)`) is given; undefined when it has no `ids`. */
  function idCountOf(field: GraphQLField<unknown, unknown>, node: FieldNode): number | undefined {
    if (!field.args.some((arg) => arg.name === 'ids')) return undefined;
    const given = node.arguments?.find((arg) => arg.name.value === 'ids')?.value;
    if (given?.kind === Kind.LIST) return given.values.length;
    if (given?.kind === Kind.VARIABLE) {
      const name = given.name.value;
      const value = name in variables ? variables[name] : variableDefaults.get(name);
      // A single id is coerced to a list of one; anything else is refused by the variable's own validation.
      return Array.isArray(value) ? value.length : 1;
    }
    return 1;
  }

  function selectionCost(selectionSet: SelectionSetNode, parent: GraphQLCompositeType, pageSize: number | undefined): OperationShape {
    let total = NOTHING;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value === '__typename') continue;
        const field = fieldOf(schema, parent, selection.name.value);
        if (!field) continue;
        const named = getNamedType(field.type);
        const list = isListType(getNullableType(field.type));
        const ids = list ? idCountOf(field, selection) : undefined;
        // Counted whatever is selected in it: a Node field's ids are what the cap on node ids counts.
        if (isInterfaceType(named) && named.name === 'Node') total = add(total, { cost: 0, nodeIds: ids ?? 1, largestIdList: ids ?? 1 });
        if (isLeafType(named) || !selection.selectionSet || !isCompositeType(named)) continue;
        const inner = selectionCost(selection.selectionSet, named, pageSizeOf(field, selection));
        if (ids !== undefined) {
          // Each id is one object fetched as its own field would fetch it: 1, and what is selected in it.
          total = add(total, add(ONE, add(ONE, inner), ids));
          continue;
        }
        // A connection's own `first` sizes the lists directly inside it (edges, nodes), not the connection itself.
        const factor = list ? (pageSize ?? LIST_SIZE_ESTIMATE) : 1;
        total = add(total, add(ONE, inner, factor));
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (type && isCompositeType(type)) total = add(total, selectionCost(selection.selectionSet, type, pageSize));
      } else {
        total = add(total, fragmentCost(selection.name.value, pageSize));
      }
    }
    return total;
  }

  function fragmentCost(name: string, pageSize: number | undefined): OperationShape {
    const key = `${name}|${pageSize ?? ''}`;
    const known = fragmentCosts.get(key);
    if (known !== undefined) return known;
    const fragment = fragments.get(name);
    // A cycle is refused by validation (NoFragmentCycles); costing it as nothing just avoids looping meanwhile.
    if (!fragment || inProgress.has(key)) return NOTHING;
    const type = schema.getType(fragment.typeCondition.name.value);
    if (!type || !isCompositeType(type)) return NOTHING;
    inProgress.add(key);
    const cost = selectionCost(fragment.selectionSet, type, pageSize);
    inProgress.delete(key);
    fragmentCosts.set(key, cost);
    return cost;
  }

  return selectionCost(operation.selectionSet, root, undefined);
}

function fieldOf(schema: GraphQLSchema, parent: GraphQLCompositeType, name: string): GraphQLField<unknown, unknown> | undefined {
  // Introspection's entry points live on the query root without being listed among its fields.
  if (name === '__schema' && parent === schema.getQueryType()) return SchemaMetaFieldDef as GraphQLField<unknown, unknown>;
  if (name === '__type' && parent === schema.getQueryType()) return TypeMetaFieldDef as GraphQLField<unknown, unknown>;
  return 'getFields' in parent ? (parent.getFields()[name] as GraphQLField<unknown, unknown> | undefined) : undefined;
}

/** The fragments of a document by name, for operationCost. */
export function fragmentsOf(definitions: readonly { kind: string }[]): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      const fragment = definition as FragmentDefinitionNode;
      fragments.set(fragment.name.value, fragment);
    }
  }
  return fragments;
}
