import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');
const DIST = join(ROOT, 'dist');
const LOCK = join(DIST, '.build.lock');
const STAMP = join(DIST, '.built');
const SOURCES = ['src', 'bench'].map((folder) => join(ROOT, folder));

/**
 * `npm run build` for tests that run the built gateway as `npm start` would, done at most once however many such
 * tests run at once: jest's workers would otherwise rewrite dist/ under each other's running processes. The build
 * is skipped while dist/ is newer than every source file.
 */
export async function buildOnce(): Promise<void> {
  await acquireLock();
  try {
    if (builtAfter(newestSource())) return;
    await promisify(execFile)('npm', ['run', '-s', 'build'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }).catch(
      (error: { stdout?: string; stderr?: string }) => {
        throw new Error(`npm run build failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
      },
    );
    writeFileSync(STAMP, new Date().toISOString());
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

async function acquireLock(): Promise<void> {
  mkdirSync(DIST, { recursive: true });
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A lock left by a test process that was killed mid-build: no build takes five minutes here.
      const held = statSync(LOCK, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > 300_000) rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`waited five minutes for another test's build (${LOCK})`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

function newestSource(): number {
  let newest = 0;
  const visit = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) visit(path);
      else newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const folder of SOURCES) visit(folder);
  return newest;
}

function builtAfter(time: number): boolean {
  return (statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs ?? 0) > time;
}
