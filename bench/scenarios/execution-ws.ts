import { Agent, request } from 'node:http';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { BenchContext } from '../lib/context';
import { VIEWER_GRAPH } from '../lib/queries';
import { wants } from '../lib/settings';
import { gatewaySession } from '../lib/sign-in';
import { startBankgraph, startSandbox } from '../lib/stacks';
import { fmt, median, verdict } from '../lib/table';

const USER = { username: 'user1', password: 'doe' };

/** One transport's way to send the query once and get the answer's text. */
type Send = () => Promise<string>;

interface Measured {
  queries: number;
  cpuUsPerQuery: number;
}

/**
 * Scenario 7b: the same nested query over WebSocket and over HTTP, executed every time by the same gateway, and
 * the gateway's CPU per query on each. HTTP is asked with GET, which the answer cache never serves (it keeps JSON
 * POSTs only), so both transports execute the whole operation and read the provider through the same data cache:
 * what differs is the transport and its pipeline. Alternating rounds, as scenario 7.
 */
export async function runExecutionOverWebSocket(ctx: BenchContext): Promise<void> {
  const { settings, children } = ctx;
  if (!wants(settings, 'execution-ws')) return;
  const { warm, execution } = settings;
  ctx.progress('execution-ws: starting the sandbox and bankgraph');
  const sandbox = await startSandbox(children, 'sandbox (execution-ws)', 0, {
    extraUsers: 1,
    accountsPerUser: warm.accounts,
    transactionsPerAccount: warm.transactionsPerAccount,
    cardsPerUser: warm.cards,
  });
  const bankgraph = await startBankgraph(children, sandbox);
  const clients: Client[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: execution.connections });
  try {
    const session = await gatewaySession(bankgraph.info.url, USER.username, USER.password);
    const variables = { first: settings.first };
    const httpSend = httpGet(bankgraph.info.url, session, variables, agent);
    for (let i = 0; i < execution.connections; i++) clients.push(wsClient(bankgraph.info.url, session));
    const wsSends = clients.map((client) => wsSubscribe(client, variables));
    const expected = JSON.parse(await httpSend()) as unknown;
    if (JSON.stringify(expected) !== JSON.stringify(JSON.parse(await wsSends[0]!()))) throw new Error('HTTP and WebSocket answered the query differently');
    const sendsOf = (transport: 'http' | 'ws'): Send[] => (transport === 'http' ? clients.map(() => httpSend) : wsSends);
    const measure = async (transport: 'http' | 'ws', durationS: number): Promise<Measured> => {
      ctx.progress(`execution-ws: ${transport}, ${execution.connections} connections, ${durationS} s`);
      const cpuBefore = bankgraph.cpuMs();
      const queries = await closedLoop(sendsOf(transport), durationS);
      return { queries, cpuUsPerQuery: ((bankgraph.cpuMs() - cpuBefore) * 1000) / queries };
    };
    await measure('http', execution.warmupS);
    await measure('ws', execution.warmupS);
    const rounds: { http: Measured; ws: Measured }[] = [];
    for (let round = 0; round < execution.rounds; round++) {
      const order: ('http' | 'ws')[] = round % 2 === 0 ? ['http', 'ws'] : ['ws', 'http'];
      const measured: Partial<Record<'http' | 'ws', Measured>> = {};
      for (const transport of order) measured[transport] = await measure(transport, execution.durationS);
      rounds.push({ http: measured.http!, ws: measured.ws! });
    }
    addRows(ctx, rounds);
  } finally {
    await Promise.all(clients.map((client) => client.dispose()));
    agent.destroy();
    await children.close(bankgraph, sandbox);
  }
}

/** `sends.length` clients, each sending its next query when its last answer arrived, for `durationS`. */
async function closedLoop(sends: readonly Send[], durationS: number): Promise<number> {
  const until = performance.now() + durationS * 1000;
  let queries = 0;
  await Promise.all(
    sends.map(async (send) => {
      while (performance.now() < until) {
        await send();
        queries += 1;
      }
    }),
  );
  return queries;
}

function httpGet(gatewayUrl: string, session: string, variables: Record<string, unknown>, agent: Agent): Send {
  const url = new URL('/graphql', gatewayUrl);
  url.searchParams.set('query', VIEWER_GRAPH);
  url.searchParams.set('variables', JSON.stringify(variables));
  const headers = { authorization: `Bearer ${session}`, 'apollo-require-preflight': 'true', accept: 'application/json' };
  return () =>
    new Promise<string>((resolve, reject) => {
      const req = request(url, { method: 'GET', headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200 || text.includes('"errors"')) reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`));
          else resolve(text);
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
}

function wsClient(gatewayUrl: string, session: string): Client {
  return createClient({
    url: `${gatewayUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${session}` },
    // One socket for the client's life, as an app keeps it: a lazy client would close it after every answer (no
    // subscription left open) and the gateway would pay a connection, an upgrade and a sign-in per query.
    lazy: false,
    retryAttempts: 0,
  });
}

function wsSubscribe(client: Client, variables: Record<string, unknown>): Send {
  return () =>
    new Promise<string>((resolve, reject) => {
      let answer: string | undefined;
      client.subscribe(
        { query: VIEWER_GRAPH, variables },
        {
          next: (result) => {
            if (result.errors) reject(new Error(`WebSocket answer with errors: ${JSON.stringify(result.errors).slice(0, 300)}`));
            else answer = JSON.stringify(result);
          },
          error: (error) => reject(error instanceof Error ? error : new Error(JSON.stringify(error))),
          complete: () => (answer === undefined ? reject(new Error('WebSocket query completed without an answer')) : resolve(answer)),
        },
      );
    });
}

function addRows(ctx: BenchContext, rounds: readonly { http: Measured; ws: Measured }[]): void {
  const { warm, execution, first } = ctx.settings;
  const scenario = `7. Execution over WebSocket beside HTTP GET: the nested query executed every time (${warm.accounts} accounts, ${warm.cards} cards, first: ${first}; data cache on, no answer cache; ${execution.connections} clients per transport; ${rounds.length} round${rounds.length === 1 ? '' : 's'} of ${execution.durationS} s each, alternating)`;
  const ratios = rounds.map((round) => round.ws.cpuUsPerQuery / round.http.cpuUsPerQuery);
  const spread = (values: number[], format: (value: number) => string): string =>
    values.length === 1 ? format(values[0]!) : `${format(median(values))} (${format(Math.min(...values))}-${format(Math.max(...values))})`;
  ctx.rows.push(
    {
      scenario,
      metric: 'process CPU per query (µs), HTTP / WebSocket, median (range) of the rounds',
      bankgraph: `${spread(
        rounds.map((round) => round.http.cpuUsPerQuery),
        fmt,
      )} / ${spread(
        rounds.map((round) => round.ws.cpuUsPerQuery),
        fmt,
      )}`,
    },
    {
      scenario,
      metric: 'queries answered, HTTP / WebSocket, median of the rounds',
      bankgraph: `${fmt(median(rounds.map((round) => round.http.queries)))} / ${fmt(median(rounds.map((round) => round.ws.queries)))}`,
    },
    {
      scenario,
      metric: 'WebSocket ÷ HTTP CPU per query, median (range) of the rounds',
      bankgraph: spread(ratios, (value) => `${fmt(value * 100)} %`),
      target: '≤ 100 %',
      verdict: verdict(median(ratios) <= 1),
    },
  );
}
