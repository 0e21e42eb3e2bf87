import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildSchema, findBreakingChanges } from 'graphql';
import { printGatewaySchema } from '../../src/platform/graphql/build-schema';
import { buildAppSchema } from '../../src/app/schema';
import { findContractViolations } from '../helpers/schema-contract';
import { projectRoot } from '../../src/cli/emit-schema';

const root = resolve(__dirname, '../..');
// The committed copy of the public contract; docs/development.md says how it is refreshed.
const contractPath = resolve(root, 'contract/schema.graphql');

describe('the emitted schema', () => {
  let printed: string;
  let contract: string;

  beforeAll(async () => {
    printed = printGatewaySchema(await buildAppSchema());
    contract = readFileSync(contractPath, 'utf8');
  });

  it('is what schema.graphql at the root holds (run `npm run schema` after changing a type or resolver)', () => {
    expect(readFileSync(resolve(root, 'schema.graphql'), 'utf8')).toBe(printed);
  });

  it('breaks nothing a client of contract/schema.graphql relies on', () => {
    expect(findBreakingChanges(buildSchema(contract), buildSchema(printed))).toEqual([]);
  });

  it('contains every type and field of contract/schema.graphql unchanged', () => {
    expect(findContractViolations(contract, printed)).toEqual([]);
  });
});

describe('npm run schema', () => {
  it('writes the root schema.graphql whether it runs from src/ or from the build in dist/', () => {
    expect(projectRoot(resolve(root, 'src/cli'))).toBe(root);
    expect(projectRoot(resolve(root, 'dist/src/cli'))).toBe(root);
  });
});
