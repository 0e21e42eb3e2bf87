import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig, withProvider, type ResolvedConfig } from '../../src/platform/config/config';
import { pointSandboxWebhooksAt, startEmbeddedSandbox } from '../../src/embedded-sandbox';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import type { Sandbox } from '../../src/sandbox/sandbox';
import { createGateway, type Gateway } from '../../src/app/gateway';
import {
  CREATE_PAYOUT,
  dataOf,
  ibanOf,
  onlyError,
  QUIET_RECONCILER,
  user,
  VERIFY,
  type LedgerEntry,
  type LoggedRequest,
  type PayoutView,
} from '../helpers/money';
import { createPostgresSchema, POSTGRES_URL, type PostgresSchema } from '../helpers/postgres';
import { graphqlAt, MERCHANT_KEY, sandboxJsonAt, signInAt, type GraphQLResult } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';

/*
 * The submission claim of a payout across gateway instances on one PostgreSQL: a retry on another instance waits
 * for a live claim only until its operation's deadline (then TRY_AGAIN), and takes over the claim of an instance
 * that was killed mid-submission instead of waiting it out. The killed instance is a real process (`kill -9`).
 */

const ROOT = join(__dirname, '..', '..');
/** OPERATION_TIMEOUT_MS's default, which these gateways run with. */
const DEADLINE_MS = 10_000;

type CreateResult = { createPayout: PayoutView };

describe('payout submission claims on two gateway instances sharing PostgreSQL', () => {
  let schema: PostgresSchema;
  let sandbox: Sandbox;
  let sandboxUrl: string;
  let config: ResolvedConfig;
  let b: Gateway;
  let a: Gateway | undefined;
  let child: ChildProcess | undefined;
  let home: string;
  let admin: pg.Client;
  let seeded: Fixtures;
  const env = {
    NODE_ENV: 'test',
    PORT: '0',
    MERCHANT_KEYS: MERCHANT_KEY,
    HTTP_BACKOFF_BASE_MS: '5',
    HTTP_BACKOFF_CAP_MS: '20',
    RATE_LIMIT_PER_SECOND: '0',
    ...QUIET_RECONCILER,
  };

  beforeAll(async () => {
    schema = await createPostgresSchema('payout_claims');
    home = mkdtempSync(join(tmpdir(), 'bankgraph-claims-'));
    const base = loadConfig({ ...env, SANDBOX_PORT: '0', STORE_URL: schema.url });
    const started = await startEmbeddedSandbox(base);
    sandbox = started.sandbox;
    sandboxUrl = sandbox.url;
    config = withProvider(base, started.provider);
    b = await createGateway(config);
    await pointSandboxWebhooksAt(sandbox.url, b.url);
    seeded = await sandboxJsonAt<Fixtures>(sandboxUrl, 'GET', '/sandbox/fixtures');
    admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
  });

  afterEach(async () => {
    await sandboxJsonAt(sandboxUrl, 'DELETE', '/sandbox/faults').catch(() => undefined);
    if (child?.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    child = undefined;
    await a?.close();
    a = undefined;
  });

  afterAll(async () => {
    await admin?.end();
    await b?.close();
    await sandbox?.close();
    await schema?.drop();
    rmSync(home, { recursive: true, force: true });
  });

  /** A gateway as `npm start` runs one, in a process of its own on the same store and sandbox; answers its URL. */
  async function startGatewayProcess(): Promise<string> {
    const { PATH, HOME } = process.env;
    const started = spawn(process.execPath, ['-r', './test/helpers/swc-register.js', 'src/index.ts'], {
      cwd: ROOT,
      env: { PATH, HOME, TMPDIR: home, XDG_RUNTIME_DIR: home, ...env, STORE_URL: schema.url, PROVIDER: 'sandbox', SANDBOX_URL: sandboxUrl, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    let output = '';
    started.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    started.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    return waitFor(
      () => {
        if (started.exitCode !== null) throw new Error(`the gateway process exited:\n${output}`);
        return /bankgraph is up: (http:\/\/\S+)\/graphql/.exec(output)?.[1];
      },
      'the gateway process up',
      60_000,
      100,
    );
  }

  function graphql<T>(url: string, query: string, variables: Record<string, unknown>, token: string): Promise<GraphQLResult<T>> {
    return graphqlAt<T>(url, query, variables, token);
  }

  async function verifiedJohn(): Promise<{ session: string; input: { transactionId: string } & Record<string, unknown> }> {
    const session = await signInAt(b.url, 'john', 'doe');
    dataOf(await graphqlAt(b.url, VERIFY, { name: 'John Doe' }, session));
    const input = {
      transactionId: randomUUID(),
      beneficiaryName: 'John Doe',
      beneficiaryIban: ibanOf(user(seeded, 'john')),
      beneficiaryReference: `Claim ${randomUUID().slice(0, 8)}`,
      amountInMinor: 1_500,
      currency: 'GBP',
    };
    return { session, input };
  }

  /** Waits until some instance holds the payout's submission claim and its POST has reached the sandbox. */
  async function claimedAndSent(transactionId: string, postsBefore: number): Promise<void> {
    await waitFor(async () => {
      const { rows } = await admin.query(`select claimed_by from ${schema.name}.payouts where transaction_id = $1`, [transactionId]);
      return rows[0]?.claimed_by ? true : undefined;
    }, 'the submission claimed');
    await waitFor(async () => ((await withdrawalPosts()) > postsBefore ? true : undefined), 'the withdrawal POST sent');
  }

  async function withdrawalPosts(): Promise<number> {
    const { requests } = await sandboxJsonAt<{ requests: LoggedRequest[] }>(sandboxUrl, 'GET', '/sandbox/requests');
    return requests.filter((request) => request.method === 'POST' && request.path === '/v1/withdrawals').length;
  }

  async function withdrawalsOf(transactionId: string): Promise<LedgerEntry[]> {
    const { withdrawals } = await sandboxJsonAt<{ withdrawals: LedgerEntry[] }>(sandboxUrl, 'GET', '/sandbox/ledger');
    return withdrawals.filter((entry) => entry.id === transactionId);
  }

  it('takes over the claim of an instance killed mid-submission, and answers the payout inside the retry’s deadline', async () => {
    const aUrl = await startGatewayProcess();
    const { session, input } = await verifiedJohn();
    // A's POST is held at the sandbox long enough for A to be killed while it holds the claim.
    await sandboxJsonAt(sandboxUrl, 'POST', '/sandbox/faults', { match: 'POST /v1/withdrawals', latencyMs: 2_000, times: 1 });
    const postsBefore = await withdrawalPosts();
    void graphql(aUrl, CREATE_PAYOUT, { input }, session).catch(() => undefined);
    await claimedAndSent(input.transactionId, postsBefore);
    child!.kill('SIGKILL');
    await waitFor(() => (child!.exitCode !== null || child!.signalCode !== null ? true : undefined), 'the gateway process gone');

    const started = performance.now();
    const retried = await graphql<CreateResult>(b.url, CREATE_PAYOUT, { input }, session);
    const tookMs = performance.now() - started;
    expect(dataOf(retried).createPayout).toMatchObject({ transactionId: input.transactionId, status: 'authorised', amountInMinor: 1_500 });
    expect(tookMs).toBeLessThan(DEADLINE_MS);
    expect(await withdrawalsOf(input.transactionId)).toHaveLength(1);
  }, 90_000);

  it('gives up on another instance’s live claim at the operation deadline with TRY_AGAIN, and the retry after it gets the one payout', async () => {
    a = await createGateway(config);
    const { session, input } = await verifiedJohn();
    // Longer than A's own deadline: A holds the claim, alive, for its whole operation.
    await sandboxJsonAt(sandboxUrl, 'POST', '/sandbox/faults', { match: 'POST /v1/withdrawals', latencyMs: DEADLINE_MS + 1_000, times: 1 });
    const postsBefore = await withdrawalPosts();
    const first = graphql<CreateResult>(a.url, CREATE_PAYOUT, { input }, session);
    await claimedAndSent(input.transactionId, postsBefore);

    const started = performance.now();
    const retried = await graphql<CreateResult>(b.url, CREATE_PAYOUT, { input }, session);
    const tookMs = performance.now() - started;
    const error = onlyError(retried);
    expect(error.extensions).toMatchObject({ code: 'TRY_AGAIN', retryAfterSeconds: 1 });
    expect(error.message).toContain(input.transactionId);
    expect(error.message).toMatch(/same transactionId/);
    expect(tookMs).toBeLessThan(DEADLINE_MS);
    expect(await withdrawalPosts()).toBe(postsBefore + 1);

    await first;
    const again = dataOf(await graphql<CreateResult>(b.url, CREATE_PAYOUT, { input }, session)).createPayout;
    expect(again).toMatchObject({ transactionId: input.transactionId, status: 'authorised' });
    await waitFor(async () => ((await withdrawalsOf(input.transactionId)).length === 1 ? true : undefined), 'one withdrawal at the provider');
  }, 60_000);
});
