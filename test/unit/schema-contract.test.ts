import { readFileSync } from 'node:fs';
import path from 'node:path';
import { findContractViolations, findDescriptionDifferences } from '../helpers/schema-contract';

// The public contract, committed in the repository (docs/development.md says how it is refreshed).
const CONTRACT_PATH = path.resolve(__dirname, '../../contract/schema.graphql');

const BASE = /* GraphQL */ `
  scalar Decimal

  type Query {
    account(id: ID!): Account
  }

  type Account {
    id: ID!
    "Open set."
    type: String!
    balance: Decimal
    transactions(from: String, first: Int = 50, after: String): [Transaction!]!
  }

  type Transaction {
    id: ID!
  }

  input PayoutInput {
    amount: Int!
    currency: String = "GBP"
    reference: String
  }

  enum Status {
    PENDING
    DONE
  }

  type Mutation {
    pay(input: PayoutInput!): Status!
  }
`;

/** BASE with one piece of text replaced, failing loudly if the piece is not there. */
function changed(from: string, to: string): string {
  expect(BASE).toContain(from);
  return BASE.replace(from, to);
}

describe('findContractViolations', () => {
  it('finds nothing when the schemas are the same', () => {
    expect(findContractViolations(BASE, BASE)).toEqual([]);
  });

  it('finds nothing in the real contract checked against itself', () => {
    const contract = readFileSync(CONTRACT_PATH, 'utf8');
    expect(findContractViolations(contract, contract)).toEqual([]);
  });

  it('accepts additions: types, fields, optional arguments, optional input fields, enum values, root types', () => {
    const actual = changed('type Transaction {\n    id: ID!', 'type Transaction {\n    id: ID!\n    note: String')
      .replace('transactions(from: String,', 'transactions(to: String, from: String,')
      .replace('reference: String\n', 'reference: String\n    memo: String\n    priority: Int! = 1\n')
      .replace('DONE', 'DONE\n    CANCELLED')
      .concat('\ntype Extra { x: Int }\ntype Subscription { ping: Extra }\nscalar JSON\n');
    expect(findContractViolations(BASE, actual)).toEqual([]);
  });

  it('ignores field order and description changes', () => {
    const actual = changed('    id: ID!\n    "Open set."\n    type: String!', '    type: String!\n    id: ID!');
    expect(findContractViolations(BASE, actual)).toEqual([]);
  });

  it('reports a missing object type', () => {
    const contract = `${BASE}\ntype Extra { x: Int }\n`;
    expect(findContractViolations(contract, BASE)).toEqual(['Object type Extra is missing']);
  });

  it('reports missing types of each kind', () => {
    const contract = `${BASE}\ninterface Node { id: ID! }\nunion Item = Account | Transaction\ninput Filter { q: String }\nenum Colour { RED }\n`;
    expect(findContractViolations(contract, BASE)).toEqual([
      'Enum Colour is missing',
      'Input type Filter is missing',
      'Union Item is missing',
      'Interface Node is missing',
    ]);
  });

  it('reports a missing scalar', () => {
    const actual = changed('scalar Decimal', 'scalar Money').replace('balance: Decimal', 'balance: Money');
    expect(findContractViolations(BASE, actual)).toEqual(['Account.balance: expected Decimal, got Money', 'Scalar Decimal is missing']);
  });

  it('reports a type whose kind differs', () => {
    const actual = changed('enum Status {\n    PENDING\n    DONE\n  }', 'type Status {\n    PENDING: Int\n  }');
    expect(findContractViolations(BASE, actual)).toEqual(['Status: expected an enum, got an object type']);
    expect(findContractViolations(BASE, changed('type Transaction {\n    id: ID!\n  }', 'scalar Transaction'))).toEqual([
      'Transaction: expected an object type, got a scalar',
    ]);
    const contract = `${BASE}\nunion Item = Account | Transaction\n`;
    expect(findContractViolations(contract, `${BASE}\ninput Item { x: Int }\n`)).toEqual(['Item: expected a union, got an input type']);
  });

  it('reports a missing field', () => {
    const actual = changed('    balance: Decimal\n', '');
    expect(findContractViolations(BASE, actual)).toEqual(['Field Account.balance is missing']);
  });

  it('reports a field made non-null, and one made nullable', () => {
    const actual = changed('balance: Decimal', 'balance: Decimal!').replace('type: String!', 'type: String');
    expect(findContractViolations(BASE, actual)).toEqual(['Account.type: expected String!, got String', 'Account.balance: expected Decimal, got Decimal!']);
  });

  it('reports a field of another type, list shape or item nullability', () => {
    expect(findContractViolations(BASE, changed('balance: Decimal', 'balance: Float'))).toEqual(['Account.balance: expected Decimal, got Float']);
    expect(findContractViolations(BASE, changed('[Transaction!]!', '[Transaction]!'))).toEqual([
      'Account.transactions: expected [Transaction!]!, got [Transaction]!',
    ]);
    expect(findContractViolations(BASE, changed('[Transaction!]!', 'Transaction!'))).toEqual([
      'Account.transactions: expected [Transaction!]!, got Transaction!',
    ]);
  });

  it('reports a missing argument', () => {
    const actual = changed('(from: String, first: Int = 50, after: String)', '(from: String, first: Int = 50)');
    expect(findContractViolations(BASE, actual)).toEqual(['Argument Account.transactions(after:) is missing']);
  });

  it('reports an argument of another type or nullability', () => {
    expect(findContractViolations(BASE, changed('account(id: ID!)', 'account(id: String!)'))).toEqual(['Query.account(id:): expected ID!, got String!']);
    expect(findContractViolations(BASE, changed('account(id: ID!)', 'account(id: ID)'))).toEqual(['Query.account(id:): expected ID!, got ID']);
  });

  it('reports a different, missing or new default value of an argument', () => {
    expect(findContractViolations(BASE, changed('first: Int = 50', 'first: Int = 20'))).toEqual([
      'Account.transactions(first:): expected default 50, got default 20',
    ]);
    expect(findContractViolations(BASE, changed('first: Int = 50', 'first: Int'))).toEqual([
      'Account.transactions(first:): expected default 50, got no default',
    ]);
    expect(findContractViolations(BASE, changed('after: String)', 'after: String = "start")'))).toEqual([
      'Account.transactions(after:): expected no default, got default "start"',
    ]);
  });

  it('reports a new required argument', () => {
    const actual = changed('account(id: ID!)', 'account(id: ID!, tenant: String!)');
    expect(findContractViolations(BASE, actual)).toEqual(['Argument Query.account(tenant:) is required (String!) but not in the contract']);
  });

  it('reports a missing input field, and one of another type', () => {
    expect(findContractViolations(BASE, changed('    reference: String\n', ''))).toEqual(['Input field PayoutInput.reference is missing']);
    expect(findContractViolations(BASE, changed('amount: Int!', 'amount: Int'))).toEqual(['PayoutInput.amount: expected Int!, got Int']);
  });

  it('reports a different default of an input field', () => {
    expect(findContractViolations(BASE, changed('currency: String = "GBP"', 'currency: String = "EUR"'))).toEqual([
      'PayoutInput.currency: expected default "GBP", got default "EUR"',
    ]);
  });

  it('reports a new required input field', () => {
    const actual = changed('reference: String\n', 'reference: String\n    account: ID!\n');
    expect(findContractViolations(BASE, actual)).toEqual(['Input field PayoutInput.account is required (ID!) but not in the contract']);
  });

  it('compares object defaults by value, not by how they were written', () => {
    const contract = `${BASE}\ninput Range { from: Int, to: Int }\ntype Report { rows(range: Range = {from: 1, to: 2}): Int }\n`;
    const reordered = contract.replace('{from: 1, to: 2}', '{to: 2, from: 1}');
    expect(findContractViolations(contract, reordered)).toEqual([]);
    expect(findContractViolations(contract, contract.replace('{from: 1, to: 2}', '{from: 1, to: 3}'))).toEqual([
      'Report.rows(range:): expected default {from: 1, to: 2}, got default {from: 1, to: 3}',
    ]);
  });

  it('reports a missing enum value', () => {
    const actual = changed('    DONE\n', '    FINISHED\n');
    expect(findContractViolations(BASE, actual)).toEqual(['Enum value Status.DONE is missing']);
  });

  it('reports a missing union member and a missing interface', () => {
    const contract = `${BASE}\ninterface Node { id: ID! }\ntype Leaf implements Node { id: ID! }\nunion Item = Account | Transaction\n`;
    const actual = `${BASE}\ninterface Node { id: ID! }\ntype Leaf { id: ID! }\nunion Item = Account\n`;
    expect(findContractViolations(contract, actual)).toEqual(['Union member Item.Transaction is missing', 'Leaf: does not implement Node']);
  });

  it('reports a missing or renamed root type', () => {
    expect(findContractViolations(BASE, changed('type Mutation {\n    pay(input: PayoutInput!): Status!\n  }', ''))).toEqual([
      'The mutation root type is missing: expected Mutation',
      'Object type Mutation is missing',
    ]);
    const renamed = `${BASE.replace('type Query {', 'type RootQuery {')}\nschema { query: RootQuery, mutation: Mutation }\n`;
    expect(findContractViolations(BASE, renamed)).toEqual(['The query root type: expected Query, got RootQuery', 'Object type Query is missing']);
  });

  it('reports every violation at once', () => {
    const actual = changed('balance: Decimal', 'balance: Decimal!').replace('    DONE\n', '').replace('first: Int = 50', 'first: Int = 10');
    expect(findContractViolations(BASE, actual)).toEqual([
      'Account.balance: expected Decimal, got Decimal!',
      'Account.transactions(first:): expected default 50, got default 10',
      'Enum value Status.DONE is missing',
    ]);
  });
});

describe('findDescriptionDifferences', () => {
  it('finds none between a schema and itself, or the real contract and itself', () => {
    expect(findDescriptionDifferences(BASE, BASE)).toEqual([]);
    const contract = readFileSync(CONTRACT_PATH, 'utf8');
    expect(findDescriptionDifferences(contract, contract)).toEqual([]);
  });

  it('reports descriptions changed or dropped, on types, fields, arguments, input fields and enum values', () => {
    const contract = BASE.replace('scalar Decimal', '"Exact."\nscalar Decimal')
      .replace('account(id: ID!)', 'account("The id." id: ID!)')
      .replace('reference: String\n', '"Shown to the payer."\nreference: String\n')
      .replace('    DONE\n', '    "Finished."\n    DONE\n');
    const actual = BASE.replace('"Open set."', '"Open."');
    expect(findDescriptionDifferences(contract, actual)).toEqual([
      'Account.type: expected description "Open set.", got "Open."',
      'Decimal: expected description "Exact.", got none',
      'PayoutInput.reference: expected description "Shown to the payer.", got none',
      'Query.account(id:): expected description "The id.", got none',
      'Status.DONE: expected description "Finished.", got none',
    ]);
  });
});
