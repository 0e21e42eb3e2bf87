import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** The name the test MCP client gives in initialize (clientInfo.name), which the gateway records as the agent's. */
export const TEST_AGENT = 'test-assistant';

/** The User-Agent it sends besides, which the gateway must not take for its name. */
export const TEST_USER_AGENT = 'test-host-http/9.9';

export interface McpClientOptions {
  /** clientInfo.name; TEST_AGENT unless given. */
  clientName?: string;
  /** Sends each request as this fetch does (a load balancer spreading them over instances). */
  fetch?: typeof fetch;
}

/** An MCP client of a gateway's /mcp, as an assistant's host connects it, presenting `token` as its bearer credential. */
export async function connectMcp(gatewayUrl: string, token: string | undefined, options: McpClientOptions = {}): Promise<Client> {
  const client = new Client({ name: options.clientName ?? TEST_AGENT, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp`), {
    requestInit: { headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), 'user-agent': TEST_USER_AGENT } },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  await client.connect(transport);
  return client;
}

/** A fetch that sends the requests for `gatewayUrls[0]` to each of `gatewayUrls` in turn, as a round-robin balancer does. */
export function roundRobin(gatewayUrls: readonly string[]): typeof fetch {
  let next = 0;
  return (input, init) => {
    const target = gatewayUrls[next++ % gatewayUrls.length]!;
    const url = new URL(input instanceof Request ? input.url : String(input));
    return fetch(new URL(`${url.pathname}${url.search}`, target), init);
  };
}

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

export function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

/** The Mcp-Session-Id a connected client was given at initialize. */
export function sessionIdOf(client: Client): string {
  const sessionId = (client.transport as StreamableHTTPClientTransport | undefined)?.sessionId;
  if (sessionId === undefined) throw new Error('the client was given no Mcp-Session-Id');
  return sessionId;
}
