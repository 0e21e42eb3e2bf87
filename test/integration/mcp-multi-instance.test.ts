import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { loadConfig, withProvider } from '../../src/platform/config/config';
import { pointSandboxWebhooksAt, startEmbeddedSandbox } from '../../src/embedded-sandbox';
import type { Fixtures } from '../../src/sandbox/fixtures/types';
import type { Sandbox } from '../../src/sandbox/sandbox';
import { createGateway, type Gateway } from '../../src/app/gateway';
import { APPROVE_PAYOUT, dataOf, ibanOf, user, type LoggedRequest } from '../helpers/money';
import { callTool, connectMcp, roundRobin, TEST_AGENT, textOf, type McpClientOptions } from '../helpers/mcp-client';
import { createPostgresSchema, type PostgresSchema } from '../helpers/postgres';
import { graphqlAt, MERCHANT_KEY, oneDeploymentEnv, sandboxJsonAt, signInAt } from '../helpers/stack';
import { requireRedis } from '../helpers/redis';

/*
 * The MCP endpoint on two gateway instances, A and B, sharing one PostgreSQL schema and one Redis, in front of one
 * sandbox: stateless MCP requests go to either (the session id one minted is read by the other), an agent's
 * proposals are admitted under the same caps across both, and a proposal made through one is approved through the other.
 */

const PREFIX = `bankgraph-mcp-${randomUUID().slice(0, 8)}:`;
const DAILY_MAX = 5_000;

describe('MCP on two gateway instances sharing PostgreSQL and Redis', () => {
  let schema: PostgresSchema;
  let sandbox: Sandbox;
  let a: Gateway;
  let b: Gateway;
  let seeded: Fixtures;
  const clients: Client[] = [];

  beforeAll(async () => {
    await requireRedis('The MCP multi-instance tests');
    schema = await createPostgresSchema('mcp_multi');
    const base = loadConfig({
      ...oneDeploymentEnv(schema.url, PREFIX),
      MCP_MUTATIONS: 'propose',
      PAYOUT_DAILY_MAX_MINOR: String(DAILY_MAX),
      // Above the daily cap: only the agent rule makes these payouts wait.
      PAYOUT_APPROVAL_ABOVE_MINOR: String(DAILY_MAX * 2),
    });
    const started = await startEmbeddedSandbox(base);
    sandbox = started.sandbox;
    const config = withProvider(base, started.provider);
    a = await createGateway(config);
    b = await createGateway(config);
    await pointSandboxWebhooksAt(sandbox.url, a.url);
    seeded = await sandboxJsonAt<Fixtures>(sandbox.url, 'GET', '/sandbox/fixtures');
  });

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await Promise.allSettled([a?.close(), b?.close()]);
    await sandbox?.close();
    await schema?.drop();
  });

  async function agentOn(gateway: Gateway, token: string, options?: McpClientOptions): Promise<Client> {
    const client = await connectMcp(gateway.url, token, options);
    clients.push(client);
    return client;
  }

  async function withdrawalPosts(): Promise<number> {
    const { requests } = await sandboxJsonAt<{ requests: LoggedRequest[] }>(sandbox.url, 'GET', '/sandbox/requests');
    return requests.filter((request) => request.method === 'POST' && request.path === '/v1/withdrawals').length;
  }

  function proposal(iban: string, amountInMinor: number): Record<string, unknown> {
    return {
      transactionId: randomUUID(),
      beneficiaryName: 'John Doe',
      beneficiaryIban: iban,
      beneficiaryReference: 'Agent rush',
      amountInMinor,
      currency: 'GBP',
    };
  }

  it('admits a parallel rush of proposals on both instances exactly up to the daily cap, sends none, and B approves what A recorded', async () => {
    const session = await signInAt(a.url, 'john', 'doe');
    const [onA, onB] = [await agentOn(a, session), await agentOn(b, session)];
    // Initialized on A, then every request on the other instance in turn, as behind a round-robin balancer.
    const spread = await agentOn(a, session, { fetch: roundRobin([a.url, b.url]) });
    for (let call = 0; call < 2; call += 1) expect((await callTool(spread, 'verify_account_holder', { name: 'John Doe' })).isError).toBeFalsy();
    const iban = ibanOf(user(seeded, 'john'));
    const before = await withdrawalPosts();
    // Twenty proposals of 1000 against a cap of 5000: exactly five fit, whichever instance admits them.
    const inputs = Array.from({ length: 20 }, () => proposal(iban, 1_000));
    const answers = await Promise.all(inputs.map((input, index) => callTool([onA, onB, spread][index % 3]!, 'propose_payout', { input })));
    const admitted = answers.filter((answer) => !answer.isError);
    expect(admitted).toHaveLength(DAILY_MAX / 1_000);
    for (const answer of admitted) expect((answer.structuredContent as { createPayout: { status: string } }).createPayout.status).toBe('awaiting-approval');
    for (const refused of answers.filter((answer) => answer.isError)) expect(textOf(refused)).toMatch(/^PAYOUT_LIMIT_EXCEEDED: /);
    expect(await withdrawalPosts()).toBe(before);
    const recorded = (await Promise.all(inputs.map((input) => b.features.payouts.ledger.get(input.transactionId as string)))).filter(
      (payout) => payout !== undefined,
    );
    expect(recorded.map((payout) => [payout.status, payout.agentClient])).toEqual(
      Array.from({ length: DAILY_MAX / 1_000 }, () => ['awaiting-approval', TEST_AGENT]),
    );

    const throughA = inputs.findIndex((input, index) => index % 3 === 0 && recorded.some((payout) => payout.transactionId === input.transactionId));
    expect(throughA).toBeGreaterThanOrEqual(0);
    const first = inputs[throughA]!.transactionId as string;
    const approved = dataOf(await graphqlAt<{ approvePayout: { status: string } }>(b.url, APPROVE_PAYOUT, { id: first }, MERCHANT_KEY));
    expect(approved.approvePayout.status).not.toBe('awaiting-approval');
    expect(await withdrawalPosts()).toBe(before + 1);
    const read = await callTool(onA, 'payout_status', { transactionId: first });
    expect((read.structuredContent as { payout: { status: string } }).payout.status).toBe(approved.approvePayout.status);
    // Read on both instances with the one session id.
    for (let call = 0; call < 2; call += 1) {
      const spreadRead = await callTool(spread, 'payout_status', { transactionId: first });
      expect((spreadRead.structuredContent as { payout: { transactionId: string } | null }).payout?.transactionId).toBe(first);
    }
  });

  it("ends an agent's access on A once its user is revoked through B", async () => {
    const person = seeded.users.filter((candidate) => candidate.username !== 'john').at(-1)!;
    const session = await signInAt(a.url, person.username, person.password);
    const agent = await agentOn(a, session);
    expect((await callTool(agent, 'viewer_accounts')).isError).toBeFalsy();
    const { viewer } = dataOf(await graphqlAt<{ viewer: { userId: string } }>(a.url, '{ viewer { userId } }', {}, session));
    dataOf(await graphqlAt(b.url, 'mutation ($id: ID!) { revokeUser(userId: $id) }', { id: viewer.userId }, MERCHANT_KEY));
    await expect(callTool(agent, 'viewer_accounts')).rejects.toMatchObject({ code: 401 });
  });
});
