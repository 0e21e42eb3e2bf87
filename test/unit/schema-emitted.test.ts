import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { RESOLVERS } from '../../src/resolvers';
import { buildGatewaySchema, printGatewaySchema } from '../../src/schema/build-schema';
import { findContractViolations } from '../../src/schema/contract';

const root = resolve(__dirname, '../..');
const contractPath = resolve(root, '../shared/api/schema.graphql');

describe('the emitted schema', () => {
  let printed: string;

  beforeAll(async () => {
    printed = printGatewaySchema(await buildGatewaySchema({ resolvers: RESOLVERS }));
  });

  it('is what schema.graphql at the root holds (run `npm run schema` after changing a type or resolver)', () => {
    expect(readFileSync(resolve(root, 'schema.graphql'), 'utf8')).toBe(printed);
  });

  it('contains the public contract in ../shared/api/schema.graphql unchanged', () => {
    if (!existsSync(contractPath)) throw new Error(`the contract is missing at ${contractPath}; the checkout must have shared/ beside it`);
    expect(findContractViolations(readFileSync(contractPath, 'utf8'), printed)).toEqual([]);
  });
});
