import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { advanceSandboxClock, APPROVE_PAYOUT, CREATE_PAYOUT, dataOf, fixtures, ibanOf, providerRequests, user } from '../helpers/money';
import { startTestIdp, type TestIdp } from '../helpers/jwks-server';
import { callTool, connectMcp, sessionIdOf, TEST_AGENT, textOf } from '../helpers/mcp-client';
import { startStack, type Stack } from '../helpers/stack';
import { MCP_TOOLS_DIR } from '../../src/app/mcp';
import { buildAppSchema } from '../../src/app/schema';
import { buildManifest } from '../../src/platform/graphql/persisted/build-manifest';

function connect(stack: Stack, token: string | undefined, clientName?: string): Promise<Client> {
  return connectMcp(stack.gateway.url, token, { clientName });
}

/** One tools/list POSTed by hand, with `token` and, when given, an Mcp-Session-Id. */
function listToolsRaw(stack: Stack, token: string, sessionId?: string): Promise<Response> {
  return fetch(`${stack.gateway.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
      ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
}

async function metricsOf(stack: Stack): Promise<string> {
  return (await fetch(`${stack.gateway.url}/metrics`)).text();
}

/** A sample's value in Prometheus text, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const call = callTool;
const READ_INITIATOR = 'query ($id: ID!) { payout(transactionId: $id) { initiatedBy agentName } }';

type Accounts = { viewer: { accounts: { accountId: string; balance: { current: string } | null }[] } };
type Transactions = {
  viewer: {
    account: {
      accountId: string;
      transactions: { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: { transactionId: string }[] };
    };
  };
};

/** The text of one tool's file in operations/mcp. */
function loadedTool(file: string): string {
  return readFileSync(join(MCP_TOOLS_DIR, file), 'utf8');
}

describe('MCP endpoint', () => {
  describe('read tools, mutations off', () => {
    let stack: Stack;
    const clients: Client[] = [];

    beforeAll(async () => {
      stack = await startStack();
    });

    afterAll(async () => {
      for (const client of clients) await client.close().catch(() => undefined);
      await stack?.close();
    });

    async function signedIn(username = 'john', password = 'doe'): Promise<Client> {
      const client = await connect(stack, await stack.signIn(username, password));
      clients.push(client);
      return client;
    }

    it('answers a request without credentials 401 with the protected-resource metadata, and serves that document', async () => {
      const response = await fetch(`${stack.gateway.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(response.status).toBe(401);
      const challenge = response.headers.get('www-authenticate') ?? '';
      expect(challenge).toBe(`Bearer resource_metadata="${stack.gateway.url}/.well-known/oauth-protected-resource"`);
      const metadata = (await (await fetch(`${stack.gateway.url}/.well-known/oauth-protected-resource`)).json()) as Record<string, unknown>;
      expect(metadata.resource).toBe(`${stack.gateway.url}/mcp`);
      expect(metadata.bearer_methods_supported).toEqual(['header']);
      expect(metadata.authorization_servers).toEqual([]);
      await expect(connect(stack, undefined)).rejects.toThrow();
    });

    it('refuses a JSON-RPC batch, so the rate limit counts every tool call', async () => {
      const session = await stack.signIn();
      const message = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'viewer_accounts', arguments: {} } });
      const response = await fetch(`${stack.gateway.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify([message(1), message(2)]),
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/one JSON-RPC message per request/);
    });

    it('lists the read tools with valid JSON Schemas, and no money tool while MCP_MUTATIONS is off', async () => {
      const client = await signedIn();
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name).sort();
      expect(names).toEqual(['account_transactions', 'payout_status', 'verify_account_holder', 'viewer_accounts', 'viewer_payouts']);
      // The SDK's own validator: Ajv in strict mode, which throws on a schema that is not valid JSON Schema.
      const ajv = new AjvJsonSchemaValidator();
      for (const tool of tools) {
        expect(() => ajv.getValidator(tool.inputSchema)).not.toThrow();
        expect(tool.description?.length ?? 0).toBeGreaterThan(20);
      }
      const transactions = tools.find((tool) => tool.name === 'account_transactions')!;
      expect(transactions.inputSchema.required).toEqual(['accountId']);
      const validate = ajv.getValidator(transactions.inputSchema);
      expect(validate({ accountId: 'a', from: '2024-01-01', first: 5 }).valid).toBe(true);
      expect(validate({ from: '2024-01-01' }).valid).toBe(false);
      expect(validate({ accountId: 'a', from: 'yesterday' }).valid).toBe(false);
      expect(validate({ accountId: 'a', first: 2.5 }).valid).toBe(false);
      const refused = await call(client, 'propose_payout', { input: {} });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/No tool "propose_payout"/);
    });

    it('reads the accounts and one page of transactions of the signed-in user', async () => {
      const client = await signedIn();
      const accounts = await call(client, 'viewer_accounts');
      expect(accounts.isError).toBeFalsy();
      const { viewer } = accounts.structuredContent as Accounts;
      expect(viewer.accounts.length).toBeGreaterThan(0);
      expect(JSON.parse(textOf(accounts))).toEqual(accounts.structuredContent);
      const accountId = viewer.accounts[0]!.accountId;
      const page = await call(client, 'account_transactions', { accountId, first: 2 });
      expect(page.isError).toBeFalsy();
      const { account } = (page.structuredContent as Transactions).viewer;
      expect(account.accountId).toBe(accountId);
      expect(account.transactions.nodes.length).toBeLessThanOrEqual(2);
      if (account.transactions.pageInfo.hasNextPage) {
        const next = await call(client, 'account_transactions', { accountId, first: 2, after: account.transactions.pageInfo.endCursor });
        const ids = (next.structuredContent as Transactions).viewer.account.transactions.nodes.map((node) => node.transactionId);
        expect(ids.some((id) => account.transactions.nodes.some((node) => node.transactionId === id))).toBe(false);
      }
      const bad = await call(client, 'account_transactions', { accountId, from: 'yesterday' });
      expect(bad.isError).toBe(true);
      expect(textOf(bad)).toMatch(/BAD_USER_INPUT/);
    });

    it("does not show another user's account", async () => {
      const john = await signedIn();
      const johnAccount = ((await call(john, 'viewer_accounts')).structuredContent as Accounts).viewer.accounts[0]!.accountId;
      const seeded = await fixtures(stack);
      const other = seeded.users.find((candidate) => candidate.username !== 'john')!;
      const stranger = await signedIn(other.username, other.password);
      const answer = await call(stranger, 'account_transactions', { accountId: johnAccount });
      const account = (answer.structuredContent as { data?: Transactions | null } & Partial<Transactions>).viewer?.account ?? null;
      expect(account).toBeNull();
    });

    it("ends the agent's access once its user is revoked: the next request is 401", async () => {
      const person = (await fixtures(stack)).users.filter((candidate) => candidate.username !== 'john').at(-1)!;
      const session = await stack.signIn(person.username, person.password);
      const agent = await signedIn(person.username, person.password);
      expect((await call(agent, 'viewer_accounts')).isError).toBeFalsy();
      const { viewer } = dataOf(await stack.graphql<{ viewer: { userId: string } }>('{ viewer { userId } }', {}, session));
      dataOf(await stack.graphql('mutation ($id: ID!) { revokeUser(userId: $id) }', { id: viewer.userId }, stack.merchantKey));
      await expect(call(agent, 'viewer_accounts')).rejects.toMatchObject({
        code: 401,
        message: expect.stringMatching(/session token is unknown or has expired/) as unknown,
      });
      const raw = await fetch(`${stack.gateway.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(raw.status).toBe(401);
      expect(raw.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="/);
    });

    it('carries the agent in a signed Mcp-Session-Id, and refuses a request without one, an altered one or one minted for another principal', async () => {
      const session = await stack.signIn();
      const client = await signedIn();
      const sessionId = sessionIdOf(client);
      expect((await listToolsRaw(stack, session, sessionId)).status).toBe(200);

      const missing = await listToolsRaw(stack, session);
      expect(missing.status).toBe(400);
      expect(((await missing.json()) as { error: { message: string } }).error.message).toMatch(/Send initialize first/);

      const [version, , mac] = sessionId.split('.');
      const renamed = `${version}.${Buffer.from('some-other-agent').toString('base64url')}.${mac}`;
      const altered = await listToolsRaw(stack, session, renamed);
      expect(altered.status).toBe(404);
      expect(((await altered.json()) as { error: { message: string } }).error.message).toMatch(/^Session not found: .*Send initialize again\.$/);

      const other = (await fixtures(stack)).users.find((candidate) => candidate.username !== 'john')!;
      const borrowed = await listToolsRaw(stack, await stack.signIn(other.username, other.password), sessionId);
      expect(borrowed.status).toBe(404);
    });

    it('labels its operations transport mcp in /metrics, and the same operation over /graphql http', async () => {
      const client = await signedIn();
      const before = await metricsOf(stack);
      const series = (transport: string) =>
        `bankgraph_graphql_operations_total{operation="ViewerAccounts",type="query",transport="${transport}",outcome="success"}`;
      const count = (text: string, transport: string) => sample(text, series(transport)) ?? 0;
      expect((await call(client, 'viewer_accounts')).isError).toBeFalsy();
      expect((await call(client, 'viewer_accounts')).isError).toBeFalsy();
      const tool = loadedTool('viewer-accounts.graphql');
      dataOf(await stack.graphql(tool, {}, await stack.signIn(), { 'cache-control': 'no-cache' }));
      const after = await metricsOf(stack);
      expect(count(after, 'mcp') - count(before, 'mcp')).toBe(2);
      expect(count(after, 'http') - count(before, 'http')).toBe(1);
      expect(
        sample(after, 'bankgraph_graphql_operation_duration_seconds_count{operation="ViewerAccounts",type="query",transport="mcp"}'),
      ).toBeGreaterThanOrEqual(2);
    });

    it("refuses a document of the agent's own unless MCP_ALLOW_ARBITRARY_OPERATIONS is on", async () => {
      const client = await signedIn();
      const answer = await call(client, 'graphql_operation', { query: '{ viewer { userId } }' });
      expect(answer.isError).toBe(true);
      expect(textOf(answer)).toMatch(/No tool "graphql_operation"/);
    });
  });

  describe('propose_payout with MCP_MUTATIONS=propose', () => {
    let stack: Stack;
    let iban: string;
    const clients: Client[] = [];

    beforeAll(async () => {
      // No approval threshold in reach: only the agent rule can make these small payouts wait.
      stack = await startStack({
        env: { MCP_MUTATIONS: 'propose', MCP_ALLOW_ARBITRARY_OPERATIONS: 'true', PAYOUT_APPROVAL_ABOVE_MINOR: '400000', PAYOUT_MAX_MINOR: '5000' },
      });
      iban = ibanOf(user(await fixtures(stack), 'john'));
    });

    afterAll(async () => {
      for (const client of clients) await client.close().catch(() => undefined);
      await stack?.close();
    });

    async function agentOf(token: string, clientName?: string): Promise<Client> {
      const client = await connect(stack, token, clientName);
      clients.push(client);
      return client;
    }

    const withdrawalPosts = async (): Promise<number> =>
      (await providerRequests(stack)).filter((request) => request.method === 'POST' && request.path === '/v1/withdrawals').length;

    function proposal(amountInMinor: number): Record<string, unknown> {
      return {
        transactionId: randomUUID(),
        beneficiaryName: 'John Doe',
        beneficiaryIban: iban,
        beneficiaryReference: 'Agent test',
        amountInMinor,
        currency: 'GBP',
      };
    }

    it('records a small payout an agent proposes as awaiting approval, sends nothing, and the merchant approves it until settled', async () => {
      const session = await stack.signIn('john', 'doe');
      const agent = await agentOf(session);
      expect((await agent.listTools()).tools.map((tool) => tool.name)).toContain('propose_payout');
      expect((await call(agent, 'verify_account_holder', { name: 'John Doe' })).isError).toBeFalsy();
      const input = proposal(100);
      const sentBefore = await withdrawalPosts();
      const proposed = await call(agent, 'propose_payout', { input });
      expect(proposed.isError).toBeFalsy();
      expect((proposed.structuredContent as { createPayout: { status: string } }).createPayout.status).toBe('awaiting-approval');
      expect(textOf(proposed)).toMatch(/awaits approval/);
      expect(textOf(proposed)).toMatch(/approvePayout/);
      expect(await withdrawalPosts()).toBe(sentBefore);
      const recorded = await stack.gateway.features.payouts.ledger.get(input.transactionId as string);
      expect(recorded?.agentClient).toBe(TEST_AGENT);

      // The same amount asked by the person directly is sent at once: the wait is the agent's, not the amount's.
      const directInput = proposal(100);
      const direct = dataOf(await stack.graphql<{ createPayout: { status: string } }>(CREATE_PAYOUT, { input: directInput }, session));
      expect(direct.createPayout.status).not.toBe('awaiting-approval');

      // The API shows which payout an agent proposed, and which one its person asked for.
      const initiatorOf = async (transactionId: unknown) =>
        dataOf(await stack.graphql<{ payout: { initiatedBy: string; agentName: string | null } }>(READ_INITIATOR, { id: transactionId }, stack.merchantKey))
          .payout;
      expect(await initiatorOf(input.transactionId)).toEqual({ initiatedBy: 'AGENT', agentName: TEST_AGENT });
      expect(await initiatorOf(directInput.transactionId)).toEqual({ initiatedBy: 'USER', agentName: null });

      dataOf(await stack.graphql(APPROVE_PAYOUT, { id: input.transactionId }, stack.merchantKey));
      let status = '';
      for (let step = 0; step < 10 && status !== 'settled'; step += 1) {
        await advanceSandboxClock(stack, 5);
        const read = await call(agent, 'payout_status', { transactionId: input.transactionId });
        status = (read.structuredContent as { payout: { status: string } }).payout.status;
      }
      expect(status).toBe('settled');
    });

    it("records the client's name from initialize cleaned of control characters and cut to 64 characters, and shows another user nothing of it", async () => {
      const session = await stack.signIn('john', 'doe');
      const agent = await agentOf(session, `Evil\u0000\u202eAgent\n\t${'x'.repeat(300)}`);
      await call(agent, 'verify_account_holder', { name: 'John Doe' });
      const input = proposal(150);
      expect((await call(agent, 'propose_payout', { input })).isError).toBeFalsy();
      const recorded = await stack.gateway.features.payouts.ledger.get(input.transactionId as string);
      expect(recorded?.agentClient).toBe(`EvilAgent ${'x'.repeat(54)}`);

      const other = (await fixtures(stack)).users.find((candidate) => candidate.username !== 'john')!;
      const stranger = await agentOf(await stack.signIn(other.username, other.password));
      const read = await call(stranger, 'payout_status', { transactionId: input.transactionId });
      // As on /graphql: another user's payout reads as null, which does not even confirm that it exists.
      expect(read.isError).toBeFalsy();
      expect(read.structuredContent).toEqual({ payout: null });
    });

    it('refuses a proposal above a cap as a tool error, recording nothing', async () => {
      const agent = await agentOf(await stack.signIn('john', 'doe'));
      await call(agent, 'verify_account_holder', { name: 'John Doe' });
      const input = proposal(6000);
      const refused = await call(agent, 'propose_payout', { input });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^PAYOUT_LIMIT_EXCEEDED: /);
      expect(await stack.gateway.features.payouts.ledger.get(input.transactionId as string)).toBeUndefined();
    });

    it('never lets an agent approve, decline or refund, even with a merchant key and its own documents', async () => {
      const john = await agentOf(await stack.signIn('john', 'doe'));
      await call(john, 'verify_account_holder', { name: 'John Doe' });
      const input = proposal(200);
      await call(john, 'propose_payout', { input });
      const backOffice = await agentOf(stack.merchantKey);
      const names = (await backOffice.listTools()).tools.map((tool) => tool.name).sort();
      expect(names).toEqual(['graphql_operation', 'payment_with_refunds', 'payout_status']);
      const approve = await call(backOffice, 'graphql_operation', {
        query: 'mutation ($id: ID!) { approvePayout(transactionId: $id) { status } }',
        variables: { id: input.transactionId },
      });
      expect(approve.isError).toBe(true);
      expect(textOf(approve)).toMatch(/^FORBIDDEN: Approving a payout is decided by a person/);
      const refund = await call(backOffice, 'graphql_operation', {
        query: 'mutation { refundPayment(input: { paymentId: "p", reference: "r" }) { status } }',
      });
      expect(textOf(refund)).toMatch(/^FORBIDDEN: Refunding a payment is decided by a person/);
      const read = await call(backOffice, 'payout_status', { transactionId: input.transactionId });
      expect((read.structuredContent as { payout: { status: string } }).payout.status).toBe('awaiting-approval');
    });
  });

  describe('a parallel rush of agent proposals near the daily cap', () => {
    const DAILY_MAX = 7_000;
    let stack: Stack;
    let client: Client | undefined;

    beforeAll(async () => {
      // No approval threshold in reach: only the agent rule can make these payouts wait.
      stack = await startStack({
        env: { MCP_MUTATIONS: 'propose', PAYOUT_DAILY_MAX_MINOR: String(DAILY_MAX), PAYOUT_APPROVAL_ABOVE_MINOR: String(DAILY_MAX * 2) },
      });
    });

    afterAll(async () => {
      await client?.close().catch(() => undefined);
      await stack?.close();
    });

    it('records exactly what the cap admits, every one awaiting approval, and sends the provider no payout', async () => {
      client = await connect(stack, await stack.signIn('john', 'doe'));
      expect((await call(client, 'verify_account_holder', { name: 'John Doe' })).isError).toBeFalsy();
      const iban = ibanOf(user(await fixtures(stack), 'john'));
      const inputs = Array.from({ length: 20 }, () => ({
        transactionId: randomUUID(),
        beneficiaryName: 'John Doe',
        beneficiaryIban: iban,
        beneficiaryReference: 'Agent rush',
        amountInMinor: 1_000,
        currency: 'GBP',
      }));
      const answers = await Promise.all(inputs.map((input) => call(client!, 'propose_payout', { input })));

      const admitted = answers.filter((answer) => !answer.isError);
      expect(admitted).toHaveLength(DAILY_MAX / 1_000);
      for (const answer of admitted) expect((answer.structuredContent as { createPayout: { status: string } }).createPayout.status).toBe('awaiting-approval');
      for (const refused of answers.filter((answer) => answer.isError)) expect(textOf(refused)).toMatch(/^PAYOUT_LIMIT_EXCEEDED: /);
      const recorded = (await Promise.all(inputs.map((input) => stack.gateway.features.payouts.ledger.get(input.transactionId)))).filter(
        (payout) => payout !== undefined,
      );
      expect(recorded).toHaveLength(DAILY_MAX / 1_000);
      for (const payout of recorded) {
        expect(payout.status).toBe('awaiting-approval');
        expect(payout.agentClient).toBe(TEST_AGENT);
      }
      const payoutRequests = (await providerRequests(stack)).filter((request) => request.path.startsWith('/v1/withdrawals'));
      expect(payoutRequests).toEqual([]);
    });
  });

  describe('over the rate limit', () => {
    let stack: Stack;
    let client: Client | undefined;

    beforeAll(async () => {
      stack = await startStack({ env: { RATE_LIMIT_PER_SECOND: '0.01', RATE_LIMIT_BURST: '4' } });
    });

    afterAll(async () => {
      await client?.close().catch(() => undefined);
      await stack?.close();
    });

    it('answers 429 once the principal has spent its allowance, counted as a refusal of transport mcp', async () => {
      // initialize and notifications/initialized spend two of the four tokens, the first two tool calls the rest.
      client = await connect(stack, await stack.signIn('john', 'doe'));
      for (let spent = 0; spent < 2; spent += 1) expect((await call(client, 'viewer_accounts')).isError).toBeFalsy();
      await expect(call(client, 'viewer_accounts')).rejects.toMatchObject({ code: 429 });
      const text = await metricsOf(stack);
      expect(sample(text, 'bankgraph_graphql_refusals_total{reason="rate_limit",transport="mcp"}')).toBe(1);
      expect(sample(text, 'bankgraph_graphql_refusals_total{reason="rate_limit",transport="http"}')).toBeUndefined();
    });
  });

  describe('with PERSISTED_DOCUMENTS=only and the manifest npm run persist builds', () => {
    let stack: Stack | undefined;
    const dir = mkdtempSync(join(tmpdir(), 'bankgraph-mcp-manifest-'));

    afterAll(async () => {
      await stack?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("runs the tools by their hash from the manifest, and refuses a document of the agent's own", async () => {
      const files = readdirSync(MCP_TOOLS_DIR).filter((file) => file.endsWith('.graphql'));
      const sources = files.map((file) => ({ name: file, text: readFileSync(join(MCP_TOOLS_DIR, file), 'utf8') }));
      const manifestPath = join(dir, 'manifest.json');
      writeFileSync(manifestPath, JSON.stringify(buildManifest(sources, await buildAppSchema())));
      stack = await startStack({
        env: { PERSISTED_DOCUMENTS: 'only', PERSISTED_DOCUMENTS_MANIFEST: manifestPath, MCP_ALLOW_ARBITRARY_OPERATIONS: 'true' },
      });
      const client = await connect(stack, await stack.signIn('john', 'doe'));
      try {
        const accounts = await call(client, 'viewer_accounts');
        expect(accounts.isError).toBeFalsy();
        expect((accounts.structuredContent as Accounts).viewer.accounts.length).toBeGreaterThan(0);
        const own = await call(client, 'graphql_operation', { query: '{ viewer { userId } }' });
        expect(own.isError).toBe(true);
        expect(textOf(own)).toMatch(/^PERSISTED_DOCUMENT_REQUIRED: /);
        expect(sample(await metricsOf(stack), 'bankgraph_graphql_refusals_total{reason="persisted_documents",transport="mcp"}')).toBe(1);
      } finally {
        await client.close();
      }
    });
  });

  describe('with app identity and MCP_AUDIENCE', () => {
    const AUDIENCE = 'bankgraph-api';
    const MCP_AUDIENCE = 'bankgraph-mcp';
    let idp: TestIdp;
    let stack: Stack | undefined;

    beforeAll(async () => {
      idp = await startTestIdp();
      try {
        stack = await startStack({
          env: { AUTH_JWKS_URL: idp.jwksUrl, AUTH_ISSUER: idp.issuer, AUTH_AUDIENCE: AUDIENCE, AUTH_ALGORITHMS: 'ES256', MCP_AUDIENCE },
        });
      } catch (error) {
        await idp.close();
        throw error;
      }
    });

    afterAll(async () => {
      try {
        await stack?.close();
      } finally {
        await idp?.close();
      }
    });

    const tokenFor = (aud: string): string => {
      const now = Math.floor(Date.now() / 1000);
      return idp.sign({ iss: idp.issuer, aud, sub: 'agent-user-1', iat: now, exp: now + 300 });
    };

    it('accepts on /mcp only app tokens for MCP_AUDIENCE, names the issuer as the authorization server, and keeps those tokens off /graphql', async () => {
      const metadata = (await (await fetch(`${stack!.gateway.url}/.well-known/oauth-protected-resource`)).json()) as Record<string, unknown>;
      expect(metadata.authorization_servers).toEqual([idp.issuer]);

      const agent = await connect(stack!, tokenFor(MCP_AUDIENCE));
      try {
        const accounts = await call(agent, 'viewer_accounts');
        expect(accounts.isError).toBeFalsy();
        expect((accounts.structuredContent as Accounts).viewer.accounts).toEqual([]);
      } finally {
        await agent.close();
      }
      await expect(connect(stack!, tokenFor(AUDIENCE))).rejects.toMatchObject({
        code: 401,
        message: expect.stringMatching(/meant for another API/) as unknown,
      });
      const onGraphql = await stack!.graphql('{ viewer { userId } }', {}, tokenFor(MCP_AUDIENCE));
      expect(onGraphql.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    });
  });
});
