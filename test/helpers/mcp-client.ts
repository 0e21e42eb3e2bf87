import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** The User-Agent the test MCP client sends, which the gateway records as the agent's name. */
export const TEST_AGENT = 'test-assistant/1.0';

/** An MCP client of a gateway's /mcp, as an assistant's host connects it, presenting `token` as its bearer credential. */
export async function connectMcp(gatewayUrl: string, token: string | undefined): Promise<Client> {
  const client = new Client({ name: 'test-assistant', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp`), {
    requestInit: { headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), 'user-agent': TEST_AGENT } },
  });
  await client.connect(transport);
  return client;
}

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

export function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}
