import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const BIN = join(ROOT, 'node_modules', '.bin');

/** `npm run lint` must fail on a violation, not only pass on today's tree: each rule is shown a breach. */
describe('npm run lint', () => {
  it('reports each architecture rule that the made-up tree in test/fixtures/architecture breaks', () => {
    const fixture = join(ROOT, 'test', 'fixtures', 'architecture');
    const cruise = (...output: string[]) =>
      spawnSync(join(BIN, 'depcruise'), ['src', '--config', join(ROOT, '.dependency-cruiser.cjs'), ...output], { cwd: fixture, encoding: 'utf8' });
    // As `npm run lint` runs it: a failing exit status.
    expect(cruise().status).not.toBe(0);
    const run = cruise('--output-type', 'json');
    const report = JSON.parse(run.stdout) as { summary: { violations: { rule: { name: string }; from: string; to: string }[] } };
    expect(report.summary.violations.map(({ rule, from, to }) => `${rule.name}: ${from} -> ${to}`).sort()).toEqual([
      'datasources-know-nothing-of-resolvers: src/datasources/data.client.ts -> src/resolvers/viewer.resolver.ts',
      'gateway-meets-sandbox-over-http: src/resolvers/viewer.resolver.ts -> src/sandbox/bank.ts',
      'homes-below-resolvers: src/payouts/payout.workflow.ts -> src/resolvers/viewer.resolver.ts',
      'sandbox-is-a-separate-program: src/sandbox/bank.ts -> src/server.ts',
      'subscriptions-know-no-resolvers: src/subscriptions/streams.ts -> src/resolvers/viewer.resolver.ts',
    ]);
  }, 60_000);

  it('refuses process.env outside src/platform/config/config.ts', () => {
    const lint = (file: string) =>
      spawnSync(join(BIN, 'eslint'), ['--stdin', '--stdin-filename', file], { cwd: ROOT, encoding: 'utf8', input: 'export const port = process.env.PORT;\n' });
    const outside = lint('src/server-extra.ts');
    expect(outside.status).toBe(1);
    expect(outside.stdout).toContain('Only src/platform/config/config.ts reads the environment');
    expect(lint('src/platform/config/config.ts').status).toBe(0);
  }, 60_000);
});
