import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/**
 * Development gateways on the embedded sandbox (`npm start`) note where they run, one small file per process in a
 * folder of this OS user's, so that `npm run sandbox:login` finds the gateway whatever PORT it was started with.
 * The file holds the public address and the process id only, nothing secret, and goes when the gateway stops; one
 * left by a process that died is skipped (and removed) by the next reader.
 */
export interface RunningGateway {
  url: string;
  pid: number;
  /** The folder it was started from: a checkout's own gateway wins over another checkout's. */
  cwd: string;
}

function registryFolder(): string {
  return join(tmpdir(), `bankgraph-${userInfo().uid}`, 'gateways');
}

/** Notes this process's gateway; the returned function removes the note. */
export async function announceGateway(url: string): Promise<() => Promise<void>> {
  const folder = registryFolder();
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const file = join(folder, `${process.pid}.json`);
  const entry: RunningGateway = { url, pid: process.pid, cwd: process.cwd() };
  await writeFile(file, JSON.stringify(entry), { mode: 0o600 });
  return () => rm(file, { force: true });
}

/** The gateways whose processes are alive, this folder's first. */
export async function runningGateways(cwd = process.cwd()): Promise<RunningGateway[]> {
  const folder = registryFolder();
  const names = await readdir(folder).catch(() => [] as string[]);
  const found: RunningGateway[] = [];
  for (const name of names.filter((file) => file.endsWith('.json'))) {
    const entry = await readEntry(join(folder, name));
    if (entry && isAlive(entry.pid)) found.push(entry);
    else await rm(join(folder, name), { force: true });
  }
  return found.sort((a, b) => Number(b.cwd === cwd) - Number(a.cwd === cwd));
}

async function readEntry(file: string): Promise<RunningGateway | undefined> {
  try {
    const entry = JSON.parse(await readFile(file, 'utf8')) as Partial<RunningGateway>;
    const valid = typeof entry.url === 'string' && Number.isSafeInteger(entry.pid) && typeof entry.cwd === 'string';
    return valid ? (entry as RunningGateway) : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    // ESRCH: gone. EPERM: another user's process now holds the pid, so not the gateway that wrote the note.
    return false;
  }
}
