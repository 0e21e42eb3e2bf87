import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { announceGateway, registryPlace, runningGateways, type RegistryPlace } from '../../src/cli/gateway.registry';
import { loadRuntimeDir } from '../../src/platform/config/config';

/**
 * The registry of running development gateways (`npm start` writes, `npm run sandbox:login` reads) as another local
 * user would attack it: a folder made first in the shared temp folder, links planted where entries go, entries that
 * name a relay. Each test has a temp folder of its own; the tests run as root, so ownership is made with chown.
 */
describe('the gateway registry', () => {
  const NOBODY = 65534;
  let temp: string;
  let root: string;
  let place: RegistryPlace;

  beforeEach(() => {
    temp = mkdtempSync(join(tmpdir(), 'bankgraph-registry-'));
    root = join(temp, `bankgraph-${userInfo().uid}`);
    place = registryPlace(undefined, temp);
  });

  afterEach(() => {
    rmSync(temp, { recursive: true, force: true });
  });

  /** A folder as another user would leave it: made before the victim's first `npm start`. */
  function planted(path: string, mode: number, owner?: number): void {
    mkdirSync(path, { recursive: true });
    chmodSync(path, mode);
    if (owner !== undefined) chownSync(path, owner, owner);
  }

  it('makes its folders readable by this user alone, and lists the gateway it noted', async () => {
    const remove = await announceGateway('http://localhost:4610', place);
    for (const folder of [root, join(root, 'gateways')]) expect(lstatSync(folder).mode & 0o777).toBe(0o700);
    expect(await runningGateways(process.cwd(), place)).toEqual([{ url: 'http://localhost:4610', pid: process.pid, cwd: process.cwd() }]);
    await remove();
    expect(await runningGateways(process.cwd(), place)).toEqual([]);
  });

  it('refuses a folder open to other users (0777), names it and says what to do, and writes nothing into it', async () => {
    planted(root, 0o777);
    await expect(announceGateway('http://localhost:4610', place)).rejects.toThrow(`The gateway registry folder ${root} is open to other users (mode 777).`);
    await expect(announceGateway('http://localhost:4610', place)).rejects.toThrow(`Remove it (rm -rf ${root}); the next \`npm start\` makes it again`);
    expect(readdirSync(root)).toEqual([]);
    await expect(runningGateways(process.cwd(), place)).rejects.toThrow(`${root} is open to other users`);
  });

  it('refuses a gateways folder open to other users inside a folder of its own', async () => {
    planted(join(root, 'gateways'), 0o733);
    chmodSync(root, 0o700);
    await expect(announceGateway('http://localhost:4610', place)).rejects.toThrow(`${join(root, 'gateways')} is open to other users (mode 733)`);
    expect(readdirSync(join(root, 'gateways'))).toEqual([]);
  });

  it('refuses a folder owned by another user, however closed its mode', async () => {
    planted(root, 0o700, NOBODY);
    const refusal = `${root} is owned by uid ${NOBODY}, not by you (uid ${userInfo().uid})`;
    await expect(announceGateway('http://localhost:4610', place)).rejects.toThrow(refusal);
    await expect(announceGateway('http://localhost:4610', place)).rejects.toThrow('set XDG_RUNTIME_DIR or TMPDIR to a folder only you can write');
    expect(readdirSync(root)).toEqual([]);
    await expect(runningGateways(process.cwd(), place)).rejects.toThrow(refusal);
  });

  it('refuses a folder that is a link, even to a folder of its own', async () => {
    const elsewhere = join(temp, 'elsewhere');
    planted(elsewhere, 0o700);
    symlinkSync(elsewhere, root);
    await expect(announceGateway('http://localhost:4610', place)).rejects.toThrow(`${root} is a symbolic link`);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('writes its entry through no link planted where it goes', async () => {
    planted(join(root, 'gateways'), 0o700);
    chmodSync(root, 0o700);
    const victim = join(temp, 'victim.txt');
    writeFileSync(victim, 'the victim’s own file');
    const entry = join(root, 'gateways', `${process.pid}.json`);
    symlinkSync(victim, entry);
    await announceGateway('http://localhost:4610', place);
    expect(readFileSync(victim, 'utf8')).toBe('the victim’s own file');
    expect(lstatSync(entry).isFile()).toBe(true);
    expect(lstatSync(entry).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(entry, 'utf8'))).toEqual({ url: 'http://localhost:4610', pid: process.pid, cwd: process.cwd() });
  });

  it('trusts no entry that is a link or that another user owns, however alive its pid', async () => {
    const folder = join(root, 'gateways');
    planted(folder, 0o700);
    chmodSync(root, 0o700);
    const relay = JSON.stringify({ url: 'http://relay.example', pid: process.pid, cwd: process.cwd() });
    const target = join(temp, 'relay.json');
    writeFileSync(target, relay);
    symlinkSync(target, join(folder, '1.json'));
    writeFileSync(join(folder, '2.json'), relay);
    chownSync(join(folder, '2.json'), NOBODY, NOBODY);
    expect(await runningGateways(process.cwd(), place)).toEqual([]);
    // The gateway this user noted is still found beside them.
    await announceGateway('http://localhost:4610', place);
    expect(await runningGateways(process.cwd(), place)).toEqual([{ url: 'http://localhost:4610', pid: process.pid, cwd: process.cwd() }]);
  });

  it('keeps its folder in XDG_RUNTIME_DIR when that is set, and nothing in TMPDIR', async () => {
    const runtime = join(temp, 'run-user');
    planted(runtime, 0o700);
    place = registryPlace(loadRuntimeDir({ XDG_RUNTIME_DIR: runtime, TMPDIR: temp }), temp);
    await announceGateway('http://localhost:4610', place);
    expect(readdirSync(join(runtime, 'bankgraph', 'gateways'))).toEqual([`${process.pid}.json`]);
    expect(lstatSync(join(runtime, 'bankgraph')).mode & 0o777).toBe(0o700);
    expect(readdirSync(temp).sort()).toEqual(['run-user']);
    expect(await runningGateways(process.cwd(), place)).toEqual([{ url: 'http://localhost:4610', pid: process.pid, cwd: process.cwd() }]);
  });

  it('refuses an XDG_RUNTIME_DIR that is another user’s (as after su) or writable by others, and one that is missing', async () => {
    const runtime = join(temp, 'run-user');
    planted(runtime, 0o700, NOBODY);
    place = registryPlace(runtime, temp);
    await expect(announceGateway('http://localhost:4610', place)).rejects.toThrow(
      `XDG_RUNTIME_DIR names ${runtime}, which is owned by uid ${NOBODY}, not by you (uid ${userInfo().uid}), so the gateway registry is not kept there`,
    );
    await expect(runningGateways(process.cwd(), place)).rejects.toThrow(`XDG_RUNTIME_DIR names ${runtime}`);
    chownSync(runtime, userInfo().uid, userInfo().gid);
    chmodSync(runtime, 0o777);
    await expect(announceGateway('http://localhost:4610', place)).rejects.toThrow('is writable by other users (mode 777)');
    expect(readdirSync(runtime)).toEqual([]);
    place = registryPlace(join(temp, 'gone'), temp);
    await expect(announceGateway('http://localhost:4610', place)).rejects.toThrow(`XDG_RUNTIME_DIR names ${join(temp, 'gone')}, which cannot be read (ENOENT)`);
  });

  it('reads XDG_RUNTIME_DIR only when it is an absolute path, as the XDG spec asks', () => {
    expect(loadRuntimeDir({ XDG_RUNTIME_DIR: '/run/user/1000' })).toBe('/run/user/1000');
    expect(loadRuntimeDir({ XDG_RUNTIME_DIR: 'run/user/1000' })).toBeUndefined();
    expect(loadRuntimeDir({ XDG_RUNTIME_DIR: '' })).toBeUndefined();
    expect(loadRuntimeDir({})).toBeUndefined();
  });
});
