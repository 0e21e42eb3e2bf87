import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { exampleTabs, type ExampleSeed } from './examples';
import { PLAYGROUND_CSS } from './playground-style';

const gzipAsync = promisify(gzip);

export interface PlaygroundAsset {
  name: string;
  contentType: string;
  body: Buffer;
  /** Part of the asset's URL: a new version is a new URL, so browsers may cache each one forever. */
  hash: string;
  gzipped?: Promise<Buffer>;
}

/** Files from installed packages (no CDN: the playground works offline), plus the page's own script and style. */
const PACKAGE_FILES: readonly { name: string; packageName: string; file: string; contentType: string }[] = [
  { name: 'react.production.min.js', packageName: 'react', file: 'umd/react.production.min.js', contentType: 'text/javascript; charset=utf-8' },
  { name: 'react-dom.production.min.js', packageName: 'react-dom', file: 'umd/react-dom.production.min.js', contentType: 'text/javascript; charset=utf-8' },
  { name: 'graphql-ws.min.js', packageName: 'graphql-ws', file: 'umd/graphql-ws.min.js', contentType: 'text/javascript; charset=utf-8' },
  { name: 'graphiql.min.js', packageName: 'graphiql', file: 'graphiql.min.js', contentType: 'text/javascript; charset=utf-8' },
  { name: 'graphiql.min.css', packageName: 'graphiql', file: 'graphiql.min.css', contentType: 'text/css; charset=utf-8' },
];

/** Read once per gateway: the page's scripts and styles, most of them GraphiQL's. */
export class PlaygroundAssets {
  private readonly byName = new Map<string, PlaygroundAsset>();

  /** appIdentity: the page authenticates with the app's access token, and its first tab says so; seed fills in ids. */
  constructor(appIdentity: boolean, seed: ExampleSeed = {}) {
    for (const file of PACKAGE_FILES) {
      const root = dirname(require.resolve(`${file.packageName}/package.json`));
      // Source-map comments point at files not served; browsers would ask for them whenever devtools are open.
      const text = readFileSync(join(root, file.file), 'utf8')
        .replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n')
        .replace(/\/\*# sourceMappingURL=\S+ \*\/\s*$/, '');
      this.add(file.name, file.contentType, Buffer.from(text));
    }
    // The client is a static, linted file (copied next to the compiled code by `npm run build`); the tabs it preloads
    // depend on the identity mode, so they come first, as the one global it reads.
    const client = readFileSync(join(__dirname, 'client', 'playground.client.js'), 'utf8');
    const examples = `var EXAMPLES = ${JSON.stringify(exampleTabs(appIdentity, seed))};\n`;
    this.add('playground.js', 'text/javascript; charset=utf-8', Buffer.from(examples + client));
    this.add('playground.css', 'text/css; charset=utf-8', Buffer.from(PLAYGROUND_CSS));
  }

  /** `/playground/assets/<hash>/<name>` */
  url(name: string): string {
    const asset = this.byName.get(name);
    if (!asset) throw new Error(`no playground asset ${name}`);
    return `/playground/assets/${asset.hash}/${asset.name}`;
  }

  /** The asset a path names, only if its hash is current: an old URL must not be cached forever with new content. */
  find(path: string): PlaygroundAsset | undefined {
    const match = /^\/playground\/assets\/([0-9a-f]{16})\/([A-Za-z0-9._-]+)$/.exec(path);
    const asset = match ? this.byName.get(match[2]!) : undefined;
    return asset && asset.hash === match![1] ? asset : undefined;
  }

  gzipped(asset: PlaygroundAsset): Promise<Buffer> {
    asset.gzipped ??= gzipAsync(asset.body, { level: 6 });
    return asset.gzipped;
  }

  private add(name: string, contentType: string, body: Buffer): void {
    this.byName.set(name, { name, contentType, body, hash: createHash('sha256').update(body).digest('hex').slice(0, 16) });
  }
}
