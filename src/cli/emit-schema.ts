import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildAppSchema } from '../app/schema';
import { printGatewaySchema } from '../platform/graphql/build-schema';

/** `npm run schema` (and `npm run build`): writes the schema the resolvers declare to schema.graphql at the root. */
export async function emitSchema(target = resolve(__dirname, '../../schema.graphql')): Promise<string> {
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
