import {
  astFromValue,
  buildSchema,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isObjectType,
  isRequiredArgument,
  isRequiredInputField,
  isScalarType,
  isSpecifiedScalarType,
  isUnionType,
  OperationTypeNode,
  print,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';

type Kind = 'scalar' | 'object type' | 'interface' | 'union' | 'enum' | 'input type';

function kindOf(type: GraphQLNamedType): Kind {
  if (isScalarType(type)) return 'scalar';
  if (isObjectType(type)) return 'object type';
  if (isInterfaceType(type)) return 'interface';
  if (isUnionType(type)) return 'union';
  if (isEnumType(type)) return 'enum';
  if (isInputObjectType(type)) return 'input type';
  throw new TypeError(`Unknown kind of GraphQL type ${String(type)}`);
}

const WITH_ARTICLE: Record<Kind, string> = {
  scalar: 'a scalar',
  'object type': 'an object type',
  interface: 'an interface',
  union: 'a union',
  enum: 'an enum',
  'input type': 'an input type',
};

function withArticle(kind: Kind): string {
  return WITH_ARTICLE[kind];
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// Defaults are compared as GraphQL literals rebuilt from the parsed value, so `{a: 1, b: 2}` and `{b: 2, a: 1}`
// (or 50 and 5e1) are the same default however each side happened to print it.
function defaultOf(value: GraphQLArgument | GraphQLInputField): string | undefined {
  if (value.defaultValue === undefined) return undefined;
  const ast = astFromValue(value.defaultValue, value.type);
  return ast == null ? String(value.defaultValue) : print(ast);
}

function describeDefault(printed: string | undefined): string {
  return printed === undefined ? 'no default' : `default ${printed}`;
}

/** Compares one argument or input field that exists on both sides. */
function compareValue(
  coordinate: string,
  expected: GraphQLArgument | GraphQLInputField,
  actual: GraphQLArgument | GraphQLInputField,
  violations: string[],
): void {
  if (String(expected.type) !== String(actual.type)) {
    violations.push(`${coordinate}: expected ${String(expected.type)}, got ${String(actual.type)}`);
  }
  const expectedDefault = defaultOf(expected);
  const actualDefault = defaultOf(actual);
  if (expectedDefault !== actualDefault) {
    violations.push(`${coordinate}: expected ${describeDefault(expectedDefault)}, got ${describeDefault(actualDefault)}`);
  }
}

function compareArguments(fieldCoordinate: string, expected: readonly GraphQLArgument[], actual: readonly GraphQLArgument[], violations: string[]): void {
  for (const expectedArg of expected) {
    const coordinate = `${fieldCoordinate}(${expectedArg.name}:)`;
    const actualArg = actual.find((arg) => arg.name === expectedArg.name);
    if (actualArg === undefined) violations.push(`Argument ${coordinate} is missing`);
    else compareValue(coordinate, expectedArg, actualArg, violations);
  }
  // The contract welcomes new optional arguments; a new required one breaks every existing query of the field.
  for (const actualArg of actual) {
    if (isRequiredArgument(actualArg) && !expected.some((arg) => arg.name === actualArg.name)) {
      violations.push(`Argument ${fieldCoordinate}(${actualArg.name}:) is required (${String(actualArg.type)}) but not in the contract`);
    }
  }
}

function compareFields(
  typeName: string,
  expected: Record<string, GraphQLField<unknown, unknown>>,
  actual: Record<string, GraphQLField<unknown, unknown>>,
  violations: string[],
): void {
  for (const expectedField of Object.values(expected)) {
    const coordinate = `${typeName}.${expectedField.name}`;
    const actualField = actual[expectedField.name];
    if (actualField === undefined) {
      violations.push(`Field ${coordinate} is missing`);
      continue;
    }
    if (String(expectedField.type) !== String(actualField.type)) {
      violations.push(`${coordinate}: expected ${String(expectedField.type)}, got ${String(actualField.type)}`);
    }
    compareArguments(coordinate, expectedField.args, actualField.args, violations);
  }
}

function compareInputFields(
  typeName: string,
  expected: Record<string, GraphQLInputField>,
  actual: Record<string, GraphQLInputField>,
  violations: string[],
): void {
  for (const expectedField of Object.values(expected)) {
    const coordinate = `${typeName}.${expectedField.name}`;
    const actualField = actual[expectedField.name];
    if (actualField === undefined) violations.push(`Input field ${coordinate} is missing`);
    else compareValue(coordinate, expectedField, actualField, violations);
  }
  for (const actualField of Object.values(actual)) {
    if (isRequiredInputField(actualField) && expected[actualField.name] === undefined) {
      violations.push(`Input field ${typeName}.${actualField.name} is required (${String(actualField.type)}) but not in the contract`);
    }
  }
}

function compareType(expected: GraphQLNamedType, actual: GraphQLNamedType, violations: string[]): void {
  const name = expected.name;
  if (isObjectType(expected) && isObjectType(actual)) {
    for (const iface of expected.getInterfaces()) {
      if (!actual.getInterfaces().some((it) => it.name === iface.name)) {
        violations.push(`${name}: does not implement ${iface.name}`);
      }
    }
    compareFields(name, expected.getFields(), actual.getFields(), violations);
  } else if (isInterfaceType(expected) && isInterfaceType(actual)) {
    for (const iface of expected.getInterfaces()) {
      if (!actual.getInterfaces().some((it) => it.name === iface.name)) {
        violations.push(`${name}: does not implement ${iface.name}`);
      }
    }
    compareFields(name, expected.getFields(), actual.getFields(), violations);
  } else if (isUnionType(expected) && isUnionType(actual)) {
    for (const member of expected.getTypes()) {
      if (!actual.getTypes().some((it) => it.name === member.name)) {
        violations.push(`Union member ${name}.${member.name} is missing`);
      }
    }
  } else if (isEnumType(expected) && isEnumType(actual)) {
    for (const value of expected.getValues()) {
      if (actual.getValue(value.name) == null) violations.push(`Enum value ${name}.${value.name} is missing`);
    }
  } else if (isInputObjectType(expected) && isInputObjectType(actual)) {
    compareInputFields(name, expected.getFields(), actual.getFields(), violations);
  }
}

function compareRoots(contract: GraphQLSchema, actual: GraphQLSchema, violations: string[]): void {
  for (const operation of [OperationTypeNode.QUERY, OperationTypeNode.MUTATION, OperationTypeNode.SUBSCRIPTION]) {
    const expectedRoot = contract.getRootType(operation);
    if (expectedRoot == null) continue;
    const actualRoot = actual.getRootType(operation);
    if (actualRoot == null) {
      violations.push(`The ${operation} root type is missing: expected ${expectedRoot.name}`);
    } else if (actualRoot.name !== expectedRoot.name) {
      violations.push(`The ${operation} root type: expected ${expectedRoot.name}, got ${actualRoot.name}`);
    }
  }
}

/** The types a contract is made of: its own named types, without the introspection types and built-in scalars. */
function contractTypes(schema: GraphQLSchema): GraphQLNamedType[] {
  return Object.values(schema.getTypeMap())
    .filter((type) => !isIntrospectionType(type) && !isSpecifiedScalarType(type))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Every way `actualSdl` breaks `contractSdl` for a client written against the contract, one sentence each:
 * a type, field, argument, input field, enum value, union member, interface or root type gone; a type of a
 * different kind; a field, argument or input field of another type or nullability (in either direction); an
 * argument or input field default that differs; a new argument or input field that is required. Anything else
 * the actual schema adds is fine. Descriptions are not compared here (see findDescriptionDifferences).
 */
export function findContractViolations(contractSdl: string, actualSdl: string): string[] {
  const contract = buildSchema(contractSdl);
  const actual = buildSchema(actualSdl);
  const violations: string[] = [];
  compareRoots(contract, actual, violations);
  for (const expected of contractTypes(contract)) {
    const found = actual.getType(expected.name);
    if (found == null) {
      violations.push(`${capitalised(kindOf(expected))} ${expected.name} is missing`);
    } else if (kindOf(found) !== kindOf(expected)) {
      violations.push(`${expected.name}: expected ${withArticle(kindOf(expected))}, got ${withArticle(kindOf(found))}`);
    } else {
      compareType(expected, found, violations);
    }
  }
  return violations;
}

function compareDescription(
  coordinate: string,
  expected: { description?: string | null | undefined },
  actual: { description?: string | null | undefined },
  differences: string[],
): void {
  const want = expected.description ?? undefined;
  const got = actual.description ?? undefined;
  if (want !== got) {
    const shown = (text: string | undefined) => (text === undefined ? 'none' : JSON.stringify(text));
    differences.push(`${coordinate}: expected description ${shown(want)}, got ${shown(got)}`);
  }
}

/**
 * Where the descriptions of the things both schemas have differ. Not a contract break (clients do not read them),
 * but the contract's descriptions are its documentation, and the served schema should carry them word for word.
 */
export function findDescriptionDifferences(contractSdl: string, actualSdl: string): string[] {
  const contract = buildSchema(contractSdl);
  const actual = buildSchema(actualSdl);
  const differences: string[] = [];
  for (const expected of contractTypes(contract)) {
    const found = actual.getType(expected.name);
    if (found == null || kindOf(found) !== kindOf(expected)) continue;
    compareDescription(expected.name, expected, found, differences);
    if ((isObjectType(expected) || isInterfaceType(expected)) && (isObjectType(found) || isInterfaceType(found))) {
      const actualFields = found.getFields();
      for (const field of Object.values(expected.getFields())) {
        const actualField = actualFields[field.name];
        if (actualField === undefined) continue;
        compareDescription(`${expected.name}.${field.name}`, field, actualField, differences);
        for (const arg of field.args) {
          const actualArg = actualField.args.find((it) => it.name === arg.name);
          if (actualArg !== undefined) {
            compareDescription(`${expected.name}.${field.name}(${arg.name}:)`, arg, actualArg, differences);
          }
        }
      }
    } else if (isInputObjectType(expected) && isInputObjectType(found)) {
      const actualFields = found.getFields();
      for (const field of Object.values(expected.getFields())) {
        const actualField = actualFields[field.name];
        if (actualField !== undefined) {
          compareDescription(`${expected.name}.${field.name}`, field, actualField, differences);
        }
      }
    } else if (isEnumType(expected) && isEnumType(found)) {
      for (const value of expected.getValues()) {
        const actualValue = found.getValue(value.name);
        if (actualValue != null) {
          compareDescription(`${expected.name}.${value.name}`, value, actualValue, differences);
        }
      }
    }
  }
  return differences;
}
