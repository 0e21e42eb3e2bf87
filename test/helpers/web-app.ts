import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { extname, join, normalize, relative, sep } from 'node:path';
import { promisify } from 'node:util';

const APP = join(__dirname, '..', '..', 'examples', 'web');
const DIST = join(APP, 'dist');
const STAMP = join(DIST, '.inputs-sha256');
const LOCK = join(APP, '.build.lock');
const INPUTS = ['index.html', 'package-lock.json', 'tsconfig.json', 'vite.config.ts', 'src'];

const run = promisify(execFile);

async function inApp(command: string, args: string[]): Promise<void> {
  await run(command, args, { cwd: APP, maxBuffer: 16 * 1024 * 1024 }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`${command} ${args.join(' ')} in examples/web failed: ${error.message}\n${error.stdout ?? ''}${error.stderr ?? ''}`);
  });
}

/** Every file the build reads, hashed by path and content: the build is redone only when one of them changed. */
function inputsHash(): string {
  const hash = createHash('sha256');
  const visit = (path: string): void => {
    if (statSync(path).isDirectory()) for (const entry of readdirSync(path).sort()) visit(join(path, entry));
    else hash.update(relative(APP, path)).update('\0').update(readFileSync(path)).update('\0');
  };
  for (const input of INPUTS) visit(join(APP, input));
  return hash.digest('hex');
}

/** npm keeps its own copy of the lock inside node_modules: while it matches the committed lock, `npm ci` has nothing to do. */
function dependenciesCurrent(): boolean {
  const installed = join(APP, 'node_modules', '.package-lock.json');
  if (!existsSync(installed)) return false;
  type Lock = { packages: Record<string, { version?: string; optional?: boolean }> };
  const wanted = JSON.parse(readFileSync(join(APP, 'package-lock.json'), 'utf8')) as Lock;
  const have = JSON.parse(readFileSync(installed, 'utf8')) as Lock;
  // An optional package for another platform (esbuild's binaries) is in the lock but never installed here.
  return Object.entries(wanted.packages).every(
    ([path, entry]) => path === '' || have.packages[path]?.version === entry.version || (entry.optional === true && have.packages[path] === undefined),
  );
}

/**
 * The app's dependencies (`npm ci`, skipped while node_modules matches the lock), its type check and `vite build`
 * into examples/web/dist, skipped while every input is as it was at the last build. One build at a time.
 */
export async function buildWebApp(): Promise<string> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    if (!dependenciesCurrent()) await inApp('npm', ['ci', '--no-audit', '--no-fund']);
    const inputs = inputsHash();
    if (existsSync(STAMP) && readFileSync(STAMP, 'utf8') === inputs) return DIST;
    await inApp('npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']);
    await inApp('npx', ['vite', 'build', '--logLevel', 'warn']);
    writeFileSync(STAMP, inputs);
    return DIST;
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
};

export interface ServedApp {
  /** e.g. http://localhost:43121, the app's own origin. */
  origin: string;
  close(): Promise<void>;
}

/** The built files over plain HTTP on port 0, as any static host serves a single-page app (unknown paths get index.html). */
export async function serveWebApp(root: string): Promise<ServedApp> {
  const server: Server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://app').pathname));
    let file = join(root, path);
    if (!file.startsWith(root + sep) || !existsSync(file) || statSync(file).isDirectory()) file = join(root, 'index.html');
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    res.end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    origin: `http://localhost:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
