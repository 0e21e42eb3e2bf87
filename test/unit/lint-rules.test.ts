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
      'domain-knows-no-graphql: src/payouts/payout.service.ts -> src/payouts/payout.type.ts',
      'features-meet-through-their-index: src/refunds/refund.service.ts -> src/payouts/payout.store.ts',
      'gateway-meets-sandbox-over-http: src/app/gateway.ts -> src/sandbox/bank.ts',
      'no-circular: src/refunds/refund.service.ts -> src/refunds/refund.store.ts',
      'plain-platform-knows-no-graphql: src/platform/provider/http.client.ts -> src/platform/graphql/operation-context.ts',
      'platform-knows-no-feature: src/platform/db/lease.ts -> src/payouts/index.ts',
      'sandbox-is-a-separate-program: src/sandbox/bank.ts -> src/server.ts',
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

  it('refuses a function over 100 lines, over 80 in src/app, but not in a migration', () => {
    const functionOf = (lines: number) => `export function long(): number {\n  let n = 0;\n${'  n += 1;\n'.repeat(lines - 4)}  return n;\n}\n`;
    const lint = (file: string, input: string) => spawnSync(join(BIN, 'eslint'), ['--stdin', '--stdin-filename', file], { cwd: ROOT, encoding: 'utf8', input });
    expect(lint('src/payouts/long.ts', functionOf(100)).status).toBe(0);
    const over = lint('src/payouts/long.ts', functionOf(101));
    expect(over.status).toBe(1);
    expect(over.stdout).toContain('max-lines-per-function');
    expect(lint('src/app/long.ts', functionOf(80)).status).toBe(0);
    expect(lint('src/app/long.ts', functionOf(81)).status).toBe(1);
    expect(lint('src/platform/db/migrations/9999_long.ts', functionOf(300)).status).toBe(0);
  }, 60_000);
});
