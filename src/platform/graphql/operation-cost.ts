import {
  getNamedType,
  getNullableType,
  isCompositeType,
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
 * its `ids` argument (`nodes(ids: [...])`), by LIST_SIZE_ESTIMATE for any other list.
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
  const root = schema.getRootType(operation.operation);
  if (!root) return 0;
  const variableDefaults = new Map<string, unknown>();
  for (const definition of operation.variableDefinitions ?? []) {
    if (definition.defaultValue) variableDefaults.set(definition.variable.name.value, valueFromASTUntyped(definition.defaultValue) ?? undefined);
  }
  // Fragments are costed once per (fragment, enclosing page size), for a multiplier of 1: a chain of fragments each
  // spreading the next twice would otherwise take exponential time to cost.
  const fragmentCosts = new Map<string, number>();
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

  function selectionCost(selectionSet: SelectionSetNode, parent: GraphQLCompositeType, pageSize: number | undefined): number {
    let total = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value === '__typename') continue;
        const field = fieldOf(schema, parent, selection.name.value);
        if (!field) continue;
        const named = getNamedType(field.type);
        if (isLeafType(named) || !selection.selectionSet || !isCompositeType(named)) continue;
        const list = isListType(getNullableType(field.type));
        // A connection's own `first` sizes the lists directly inside it (edges, nodes), not the connection itself.
        const factor = list ? (idCountOf(field, selection) ?? pageSize ?? LIST_SIZE_ESTIMATE) : 1;
        total += 1 + factor * selectionCost(selection.selectionSet, named, pageSizeOf(field, selection));
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (type && isCompositeType(type)) total += selectionCost(selection.selectionSet, type, pageSize);
      } else {
        total += fragmentCost(selection.name.value, pageSize);
      }
    }
    return total;
  }

  function fragmentCost(name: string, pageSize: number | undefined): number {
    const key = `${name}|${pageSize ?? ''}`;
    const known = fragmentCosts.get(key);
    if (known !== undefined) return known;
    const fragment = fragments.get(name);
    // A cycle is refused by validation (NoFragmentCycles); costing it as nothing just avoids looping meanwhile.
    if (!fragment || inProgress.has(key)) return 0;
    const type = schema.getType(fragment.typeCondition.name.value);
    if (!type || !isCompositeType(type)) return 0;
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
