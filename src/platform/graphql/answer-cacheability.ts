import { TypeInfo, visit, visitWithTypeInfo, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';

/**
 * The fields whose data comes only from the per-user data-API cache. An answer may be served again from the
 * AnswerCache only if every field the operation selects is one of these: anything else (payouts, beneficiaries,
 * payments, tasks, introspection) reads other stores or live state and must be resolved every time.
 */
const DATA_API_FIELDS: Record<string, ReadonlySet<string> | 'all'> = {
  Query: new Set(['viewer', '__typename']),
  Viewer: new Set(['accounts', 'account', 'cards', 'card', '__typename']),
  Account: 'all',
  Card: 'all',
  AccountNumber: 'all',
  Provider: 'all',
  AccountBalance: 'all',
  CardBalance: 'all',
  Transaction: 'all',
  TransactionMeta: 'all',
  Money: 'all',
  TransactionConnection: 'all',
  TransactionEdge: 'all',
  PageInfo: 'all',
};

/**
 * Per schema and parsed document: Apollo hands every request with the same text the same document, so the walk with
 * type information is done once per text rather than on every request.
 */
const verdicts = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, boolean>>();

export function isAnswerCacheable(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): boolean {
  if (operation.operation !== 'query') return false;
  let bySchema = verdicts.get(schema);
  if (!bySchema) verdicts.set(schema, (bySchema = new WeakMap()));
  let verdict = bySchema.get(document);
  if (verdict === undefined) bySchema.set(document, (verdict = onlyDataApiFields(schema, document)));
  return verdict;
}

function onlyDataApiFields(schema: GraphQLSchema, document: DocumentNode): boolean {
  const typeInfo = new TypeInfo(schema);
  let cacheable = true;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        const parent = typeInfo.getParentType()?.name;
        const allowed = parent === undefined ? undefined : DATA_API_FIELDS[parent];
        if (allowed !== 'all' && !allowed?.has(node.name.value)) cacheable = false;
      },
    }),
  );
  return cacheable;
}
