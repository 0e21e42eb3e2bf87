import 'reflect-metadata';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { EXAMPLE_TABS } from '../playground/examples';
import { buildAppSchema } from '../app/schema';
import { buildManifest, type OperationSource } from '../platform/graphql/persisted/build-manifest';

/**
 * `npm run persist [-- --out=<file>] [<.graphql file or folder>...]`: a trusted-documents manifest of the project's
 * own operations — the playground's examples, the MCP tools (operations/mcp) and test/operations/**.graphql unless
 * paths are given — for PERSISTED_DOCUMENTS_MANIFEST. Written to data/persisted-documents.json by default.
 */
async function main(args: string[]): Promise<void> {
  const out = resolve(args.find((arg) => arg.startsWith('--out='))?.slice('--out='.length) ?? 'data/persisted-documents.json');
  const paths = args.filter((arg) => !arg.startsWith('--'));
  const sources: OperationSource[] =
    paths.length > 0
      ? paths.flatMap(graphqlFiles)
      : [
          ...EXAMPLE_TABS.map((tab, index) => ({ name: `playground example ${index + 1}`, text: tab.query })),
          ...graphqlFiles('operations/mcp'),
          ...graphqlFiles('test/operations'),
        ];
  const manifest = buildManifest(sources, await buildAppSchema());
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(`wrote ${Object.keys(manifest).length} documents from ${sources.length} sources to ${out}`);
}

function graphqlFiles(path: string): OperationSource[] {
  if (!statSync(path).isDirectory()) return [{ name: path, text: readFileSync(path, 'utf8') }];
  return readdirSync(path, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.graphql'))
    .sort()
    .map((file) => ({ name: join(path, file), text: readFileSync(join(path, file), 'utf8') }));
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`npm run persist failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
