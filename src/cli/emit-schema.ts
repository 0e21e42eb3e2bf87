import 'reflect-metadata';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildAppSchema } from '../app/schema';
import { printGatewaySchema } from '../platform/graphql/build-schema';

/** The checkout's root: the nearest folder above `from` with a package.json (this file runs from src/ and from dist/src/). */
export function projectRoot(from = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}: run this from a bankgraph checkout`);
  }
}

/** `npm run schema` (and `npm run build`): writes the schema the resolvers declare to schema.graphql at the root. */
export async function emitSchema(target = join(projectRoot(), 'schema.graphql')): Promise<string> {
  const sdl = printGatewaySchema(await buildAppSchema());
  writeFileSync(target, sdl);
  return target;
}

if (require.main === module) {
  emitSchema().then(
    (target) => console.log(`wrote ${target}`),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
