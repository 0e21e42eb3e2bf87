import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { loadRuntimeDir } from '../platform/config/config';

/**
 * Development gateways on the embedded sandbox (`npm start`) note where they run, one small file per process in a
 * folder of this OS user's, so that `npm run sandbox:login` finds the gateway whatever PORT it was started with.
 * The file holds the public address and the process id only, nothing secret, and goes when the gateway stops; one
 * left by a process that died is skipped (and removed) by the next reader.
 *
 * Another local user must not be able to write there: a planted link would have `npm start` overwrite the
 * victim's files, and a planted entry would send `sandbox:login`'s bank login and session token to a relay. So the
 * folders are made readable by this user alone and any other is refused, entries are written without following
 * links, and a reader trusts only plain files of this user's.
 */
export interface RunningGateway {
  url: string;
  pid: number;
  /** The folder it was started from: a checkout's own gateway wins over another checkout's. */
  cwd: string;
}

/** The registry's own folder (made, and checked, first) and the entries' folder inside it. */
export interface RegistryPlace {
  root: string;
  folder: string;
  /** XDG_RUNTIME_DIR, when the root is in it: it must be this user's too, or its owner could swap the root. */
  runtimeDir?: string;
}

/** Said when a registry folder is not this user's alone; names the folder and what to do. */
export class RegistryFolderError extends Error {}

/** `$XDG_RUNTIME_DIR/bankgraph/gateways` when XDG_RUNTIME_DIR is set, else `$TMPDIR/bankgraph-<uid>/gateways`. */
export function registryPlace(runtimeDir = loadRuntimeDir(), temp = tmpdir()): RegistryPlace {
  if (runtimeDir) return { root: join(runtimeDir, 'bankgraph'), folder: join(runtimeDir, 'bankgraph', 'gateways'), runtimeDir };
  const root = join(temp, `bankgraph-${userInfo().uid}`);
  return { root, folder: join(root, 'gateways') };
}

/** Undefined where the OS has no uids (Windows): no owner or mode to check there. */
const myUid = (): number | undefined => process.getuid?.();

/** Notes this process's gateway; the returned function removes the note. */
export async function announceGateway(url: string, place = registryPlace()): Promise<() => Promise<void>> {
  await ownFolders(place, true);
  const file = join(place.folder, `${process.pid}.json`);
  const entry: RunningGateway = { url, pid: process.pid, cwd: process.cwd() };
  // A fresh name that cannot already exist, renamed over the entry: rename replaces a link, never writes through it.
  const temp = join(place.folder, `.${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600);
  try {
    await handle.writeFile(JSON.stringify(entry));
    await handle.close();
    await rename(temp, file);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw error;
  }
  return () => rm(file, { force: true });
}

/** The gateways whose processes are alive, this folder's first; none when no gateway ever ran here. */
export async function runningGateways(cwd = process.cwd(), place = registryPlace()): Promise<RunningGateway[]> {
  if (!(await ownFolders(place, false))) return [];
  const names = await readdir(place.folder).catch(() => [] as string[]);
  const found: RunningGateway[] = [];
  for (const name of names.filter((file) => file.endsWith('.json'))) {
    const entry = await readEntry(join(place.folder, name));
    if (entry && isAlive(entry.pid)) found.push(entry);
    else await rm(join(place.folder, name), { force: true });
  }
  return found.sort((a, b) => Number(b.cwd === cwd) - Number(a.cwd === cwd));
}

/**
 * Makes (when `create`) and checks the registry's folders, outermost first; false when they do not exist. Throws
 * RegistryFolderError for one that is a link, not a folder, another user's, or open to others.
 */
async function ownFolders(place: RegistryPlace, create: boolean): Promise<boolean> {
  if (place.runtimeDir !== undefined) await checkRuntimeDir(place.runtimeDir);
  for (const dir of [place.root, place.folder]) {
    if (create) {
      await mkdir(dir, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'EEXIST') return;
        throw new RegistryFolderError(
          `The gateway registry folder ${dir} could not be made (${error.code ?? error.message}): set XDG_RUNTIME_DIR or TMPDIR to a folder of yours. ` +
            `Meanwhile, name the gateway with --gateway <url> or PORT.`,
        );
      });
    }
    let stats: Stats;
    try {
      stats = await lstat(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !create) return false;
      throw error;
    }
    const refusal = folderRefusal(dir, stats);
    if (refusal) throw new RegistryFolderError(refusal);
  }
  return true;
}

/** XDG_RUNTIME_DIR must be this user's and writable by no one else (after `su` or `sudo` it can name another user's). */
async function checkRuntimeDir(dir: string): Promise<void> {
  const uid = myUid();
  let stats: Stats;
  try {
    stats = await stat(dir);
  } catch (error) {
    throw new RegistryFolderError(`XDG_RUNTIME_DIR names ${dir}, which cannot be read (${(error as NodeJS.ErrnoException).code}): ${RUNTIME_DIR_ADVICE}`);
  }
  const problem = !stats.isDirectory()
    ? 'is not a folder'
    : uid !== undefined && stats.uid !== uid
      ? `is owned by uid ${stats.uid}, not by you (uid ${uid})`
      : uid !== undefined && (stats.mode & 0o022) !== 0
        ? `is writable by other users (mode ${(stats.mode & 0o777).toString(8)})`
        : undefined;
  if (problem)
    throw new RegistryFolderError(`XDG_RUNTIME_DIR names ${dir}, which ${problem}, so the gateway registry is not kept there: ${RUNTIME_DIR_ADVICE}`);
}

const RUNTIME_DIR_ADVICE =
  'unset it (after su or sudo it can name another user’s folder) or set it to a folder of yours. Meanwhile, name the gateway with --gateway <url> or PORT.';

function folderRefusal(dir: string, stats: Stats): string | undefined {
  const uid = myUid();
  const problem = stats.isSymbolicLink()
    ? 'is a symbolic link'
    : !stats.isDirectory()
      ? 'is not a folder'
      : uid !== undefined && stats.uid !== uid
        ? `is owned by uid ${stats.uid}, not by you (uid ${uid})`
        : uid !== undefined && (stats.mode & 0o077) !== 0
          ? `is open to other users (mode ${(stats.mode & 0o777).toString(8)})`
          : undefined;
  if (problem === undefined) return undefined;
  const what =
    uid !== undefined && stats.uid !== uid
      ? `It is not yours to remove: have an administrator remove it, or set XDG_RUNTIME_DIR or TMPDIR to a folder only you can write.`
      : `Remove it (rm -rf ${dir}); the next \`npm start\` makes it again, readable by you alone.`;
  return (
    `The gateway registry folder ${dir} ${problem}. Another user could use it to overwrite your files or to send ` +
    `\`npm run sandbox:login\` (your bank login and session token) elsewhere, so it is not used. ${what} ` +
    `Meanwhile, name the gateway with --gateway <url> or PORT.`
  );
}

/** An entry, read only when it is a plain file of this user's (opened without following a link, so never another file). */
async function readEntry(file: string): Promise<RunningGateway | undefined> {
  let handle;
  try {
    // O_NONBLOCK: a planted FIFO would otherwise hold the open.
    handle = await open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch {
    return undefined;
  }
  try {
    const stats = await handle.stat();
    const uid = myUid();
    if (!stats.isFile() || (uid !== undefined && stats.uid !== uid) || stats.size > 64 * 1024) return undefined;
    const entry = JSON.parse(await handle.readFile('utf8')) as Partial<RunningGateway>;
    const valid = typeof entry.url === 'string' && Number.isSafeInteger(entry.pid) && typeof entry.cwd === 'string';
    return valid ? (entry as RunningGateway) : undefined;
  } catch {
    return undefined;
  } finally {
    await handle.close();
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
