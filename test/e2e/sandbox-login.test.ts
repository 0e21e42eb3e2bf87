import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../helpers/ports';
import { startStack, type Stack } from '../helpers/stack';

const ROOT = join(__dirname, '..', '..');

/** Runs `npm run sandbox:login`'s program from the TypeScript sources, as the script runs it once compiled. */
function sandboxLogin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', './test/helpers/swc-register.js', 'src/cli/sandbox-login.ts', ...args],
      { cwd: ROOT, timeout: 30_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe('npm run sandbox:login', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('prints a session token for a seeded user, signed in through the bank, that the gateway accepts', async () => {
    const run = await sandboxLogin('jane', '--gateway', stack.gateway.url);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const token = run.stdout.trim();
    expect(token).not.toContain('\n');
    const answer = await stack.graphql('{ viewer { accounts { id } } }', {}, token);
    expect(answer.errors).toBeUndefined();
    expect((answer.data as { viewer: { accounts: unknown[] } }).viewer.accounts.length).toBeGreaterThan(0);
  });

  it('says why when the bank refuses the login, and prints no token', async () => {
    const run = await sandboxLogin('nobody', '--gateway', stack.gateway.url);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('the sandbox bank refused the login nobody');
  });

  it('lists every login the sandbox seeded under --help, read from the sandbox behind the gateway', async () => {
    const run = await sandboxLogin('--help', '--gateway', stack.gateway.url);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain('usage: npm run -s sandbox:login');
    expect(run.stdout).toContain(`Logins of the sandbox behind ${stack.gateway.url} (GET ${stack.sandbox.url}/sandbox/fixtures):`);
    const { users } = await stack.sandboxJson<{ users: { username: string; providerId: string; name: string }[] }>('GET', '/sandbox/fixtures');
    expect(users.length).toBeGreaterThan(3);
    const listed = run.stdout.split('\n').filter((line) => line.startsWith('  ') && / at /.test(line));
    expect(listed).toHaveLength(users.length);
    users.forEach((user, index) => {
      expect(listed[index]).toMatch(new RegExp(`^  ${user.username} +at ${user.providerId} +${user.name} \\(\\d+ accounts?, \\d+ cards?\\)$`));
    });
  });

  it('says under --help when no sandbox can be reached, and how to list the logins then', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const run = await sandboxLogin('--help', '--gateway', closed);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('usage: npm run -s sandbox:login');
    expect(run.stdout).toContain(`The seeded logins could not be read from the sandbox behind ${closed}`);
    expect(run.stdout).toContain('/sandbox/fixtures');
  });

  it('explains its usage when the user name is missing', async () => {
    const run = await sandboxLogin('--gateway', stack.gateway.url);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('expected exactly one user name');
    expect(run.stderr).toContain('usage: npm run -s sandbox:login');
  });
});
