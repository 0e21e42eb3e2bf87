import {
  getNamedType,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  Kind,
  parse,
  print,
  typeFromAST,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { sha256Hex } from '../graphql/persisted/persisted-documents';

/** Who a tool is for: a signed-in user, a merchant key (back office), or either. */
export type ToolAudience = 'user' | 'merchant' | 'any';

export type JsonSchema = Record<string, unknown>;

/** One vetted operation offered to agents as a tool. */
export interface OperationTool {
  /** snake_case of the operation's name (ViewerAccounts: viewer_accounts). */
  name: string;
  description: string;
  /** The operation's variables as JSON Schema: non-null without a default is required. */
  inputSchema: JsonSchema;
  operationName: string;
  /** The document printed canonically: the text, and so the hash, `npm run persist` puts in the manifest. */
  text: string;
  sha256: string;
  audience: ToolAudience;
  /** Set on a tool that proposes money movement: offered only when MCP_MUTATIONS says so. */
  needsMutations: boolean;
  /** What a successful answer must tell the model besides its data (`# answer:`), e.g. that a payout awaits approval. */
  notice: string | undefined;
}

/** The JSON Schema of a scalar the schema defines, by name; others read as any JSON value with the scalar's description. */
const SCALARS: Record<string, JsonSchema> = {
  ID: { type: 'string' },
  String: { type: 'string' },
  Int: { type: 'integer', minimum: -2147483648, maximum: 2147483647 },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
  Date: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A calendar date, YYYY-MM-DD.' },
  DateTime: { type: 'string', description: 'ISO 8601 date-time.' },
  YearMonth: { type: 'string', pattern: '^\\d{4}-\\d{2}$', description: 'A year and month, YYYY-MM.' },
  Decimal: { type: 'string', pattern: '^-?\\d+(\\.\\d+)?$', description: 'An exact decimal amount such as "-2.99".' },
  MinorUnits: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "An amount in the currency's smallest unit (pence for GBP)." },
};

/**
 * A tool from one `.graphql` file: one named operation, led by `#` comment lines that give `for: user|merchant|any`,
 * optionally `needs: MCP_MUTATIONS=propose` and `answer: <notice sent with every success>`, and the description a
 * model reads. Throws, naming the file, on a file
 * that is not exactly that or whose operation does not fit the schema's variable types.
 */
export function operationTool(fileName: string, text: string, schema: GraphQLSchema): OperationTool {
  const header = text
    .split('\n')
    .filter((line) => line.startsWith('#'))
    .map((line) => line.replace(/^#\s?/, ''));
  const field = (name: string): string | undefined =>
    header
      .find((line) => line.startsWith(`${name}:`))
      ?.slice(name.length + 1)
      .trim();
  const description = header
    .filter((line) => !/^(for|needs|answer):/.test(line))
    .join(' ')
    .trim();
  const audience = field('for');
  if (audience !== 'user' && audience !== 'merchant' && audience !== 'any') throw new Error(`${fileName}: needs a "# for: user|merchant|any" line`);
  if (description === '') throw new Error(`${fileName}: needs a description in its leading # comment lines`);
  const document = parse(text);
  const operations = document.definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION);
  const operation = operations[0];
  if (operations.length !== 1 || !operation?.name || operation.operation === 'subscription' || document.definitions.length !== 1) {
    throw new Error(`${fileName}: must hold exactly one named query or mutation and nothing else`);
  }
  const printed = print(document);
  return {
    name: operation.name.value.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase(),
    description,
    inputSchema: variablesSchema(fileName, operation, schema),
    operationName: operation.name.value,
    text: printed,
    sha256: sha256Hex(printed),
    audience,
    needsMutations: field('needs') === 'MCP_MUTATIONS=propose',
    notice: field('answer'),
  };
}

function variablesSchema(fileName: string, operation: OperationDefinitionNode, schema: GraphQLSchema): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const variable of operation.variableDefinitions ?? []) {
    const name = variable.variable.name.value;
    const type = typeFromAST(schema, variable.type) as GraphQLInputType | undefined;
    if (!type) throw new Error(`${fileName}: variable $${name} has a type the schema does not define`);
    properties[name] = inputSchema(type);
    if (type instanceof GraphQLNonNull && !variable.defaultValue) required.push(name);
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

/** A GraphQL input type as JSON Schema: nullable types also take null, as GraphQL's variables do. */
function inputSchema(type: GraphQLInputType): JsonSchema {
  if (type instanceof GraphQLNonNull) return nonNullSchema(type.ofType as GraphQLInputType);
  const inner = nonNullSchema(type);
  return { anyOf: [inner, { type: 'null' }] };
}

function nonNullSchema(type: GraphQLInputType): JsonSchema {
  if (type instanceof GraphQLNonNull) return nonNullSchema(type.ofType as GraphQLInputType);
  if (type instanceof GraphQLList) return { type: 'array', items: inputSchema(type.ofType as GraphQLInputType) };
  if (type instanceof GraphQLEnumType) return { type: 'string', enum: type.getValues().map((value) => value.name), ...described(type.description) };
  if (type instanceof GraphQLInputObjectType) {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const field of Object.values(type.getFields())) {
      properties[field.name] = { ...inputSchema(field.type), ...described(field.description) };
      if (field.type instanceof GraphQLNonNull && field.defaultValue === undefined) required.push(field.name);
    }
    return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
  }
  const scalar = getNamedType(type) as GraphQLScalarType;
  return SCALARS[scalar.name] ?? described(scalar.description ?? `A ${scalar.name}.`);
}

function described(description: string | null | undefined): JsonSchema {
  return description ? { description } : {};
}
