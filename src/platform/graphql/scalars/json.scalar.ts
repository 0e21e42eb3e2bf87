import { GraphQLScalarType, valueFromASTUntyped } from 'graphql';

/** Carries provider objects as they were sent (TransactionMeta.raw), so nothing about their shape is assumed. */
export const JSONScalar = new GraphQLScalarType<unknown, unknown>({
  name: 'JSON',
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (node, variables) => valueFromASTUntyped(node, variables),
});
