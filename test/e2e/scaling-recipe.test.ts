import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOnce } from '../helpers/build';
import { freePort } from '../helpers/ports';
import { createPostgresSchema, type PostgresSchema } from '../helpers/postgres';
import { requireRedis } from '../helpers/redis';
import { waitFor } from '../helpers/wait-for';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

const ROOT = join(__dirname, '..', '..');

/** The commands of docs/scaling.md's "Two instances on this machine", in order. */
function recipe(): string[] {
  const text = readFileSync(join(ROOT, 'docs', 'scaling.md'), 'utf8');
  const section = text.slice(text.indexOf('## Two instances on this machine'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('docs/scaling.md has no sh block under "Two instances on this machine"');
  return block[1]!.trim().split('\n');
}

/**
 * docs/scaling.md's recipe, run as written but for what must differ on a shared machine: free ports for 4010, 4001
 * and 4002, a PostgreSQL schema of its own for the database, and one line added at the end that prints the
 * merchant key the recipe made. `npm run build` is the build the e2e tests share.
 */
describe('docs/scaling.md: a standalone sandbox and two instances on PostgreSQL and Redis', () => {
  let shell: ChildProcess | undefined;
  let schema: PostgresSchema | undefined;
  let home: string;

  beforeAll(async () => {
    await requireRedis('The scaling recipe test');
    await buildOnce();
  }, 300_000);

  afterAll(async () => {
    await disposeWsClients();
    if (shell?.pid !== undefined && shell.exitCode === null) process.kill(-shell.pid, 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (shell?.pid !== undefined) process.kill(-shell.pid, 'SIGKILL');
    await schema?.drop();
    rmSync(home, { recursive: true, force: true });
  });

  it('runs as written, and a subscription on the second instance sees a refund made on the first', async () => {
    const lines = recipe();
    expect(lines[0]).toBe('npm run build');
    schema = await createPostgresSchema('scaling_recipe');
    home = mkdtempSync(join(tmpdir(), 'bankgraph-recipe-'));
    const [sandboxPort, portA, portB] = [await freePort(), await freePort(), await freePort()];
    const script = [
      ...lines
        .slice(1)
        .map((line) =>
          line
            .replace('node dist/src/sandbox/main.js &', `SANDBOX_PORT=${sandboxPort} node dist/src/sandbox/main.js &`)
            .replace('http://127.0.0.1:4010', `http://127.0.0.1:${sandboxPort}`)
            .replace('postgres://postgres@127.0.0.1:5432/test', `'${schema!.url}'`)
            .replace('PORT=4001', `PORT=${portA}`)
            .replace('PORT=4002', `PORT=${portB}`),
        ),
      'echo "merchant keys: $MERCHANT_KEYS"',
      'wait',
    ].join('\n');
    const { PATH, HOME } = process.env;
    shell = spawn('bash', ['-c', script], {
      cwd: ROOT,
      env: { PATH, HOME, TMPDIR: home, LOG_LEVEL: 'warn' },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    shell.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    shell.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));

    await waitFor(() => ((output.match(/bankgraph is up/g) ?? []).length === 2 ? true : undefined), `both instances up:\n${output}`, 60_000, 100);
    expect(output).toContain(`bankgraph is up: http://localhost:${portA}/graphql`);
    expect(output).toContain(`bankgraph is up: http://localhost:${portB}/graphql`);
    const merchantKey = /merchant keys: (\S+)/.exec(output)![1]!;

    const fixtures = (await (await fetch(`http://127.0.0.1:${sandboxPort}/sandbox/fixtures`)).json()) as { payments: { id: string; status: string }[] };
    const payment = fixtures.payments.find((candidate) => candidate.status === 'settled')!;
    const refundOnA = async (amountInMinor: number): Promise<string> => {
      const answer = await fetch(`http://127.0.0.1:${portA}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${merchantKey}` },
        body: JSON.stringify({
          query:
            'mutation ($paymentId: ID!, $amount: MinorUnits!) { refundPayment(input: { paymentId: $paymentId, amountInMinor: $amount, reference: "recipe" }) { id } }',
          variables: { paymentId: payment.id, amount: amountInMinor },
        }),
      });
      const { data, errors } = (await answer.json()) as { data?: { refundPayment: { id: string } }; errors?: unknown };
      expect(errors).toBeUndefined();
      return data!.refundPayment.id;
    };
    const untilRefund = async (live: { next(timeoutMs?: number): Promise<{ data?: { refundUpdated: { id: string } } | null }> }, id: string) => {
      while ((await live.next(10_000)).data?.refundUpdated.id !== id);
    };

    // The same merchant key works on both instances; B's subscription opens on the refund A made (its current state).
    const first = await refundOnA(100);
    const onB = connectWs(`http://127.0.0.1:${portB}`, merchantKey).subscribe<{ refundUpdated: { id: string } }>(
      'subscription ($paymentId: ID!) { refundUpdated(paymentId: $paymentId) { id status } }',
      { paymentId: payment.id },
    );
    await untilRefund(onB, first);
    // A refund A makes now reaches B's open subscription through Redis.
    await untilRefund(onB, await refundOnA(150));
  }, 120_000);
});
