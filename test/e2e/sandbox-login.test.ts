import { execFile } from 'node:child_process';
import { join } from 'node:path';
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

  it('explains its usage when the user name is missing', async () => {
    const run = await sandboxLogin('--gateway', stack.gateway.url);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('expected exactly one user name');
    expect(run.stderr).toContain('usage: npm run -s sandbox:login');
  });
});
