import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../access/principal';
import { describePrincipal } from '../graphql/operation-context';
import { GatewayError } from '../errors/gateway-errors';
import type { OperationAnswer, OperationRequest, PrincipalLookup } from '../graphql/http-handler';
import { PayloadTooLargeError, readBody } from '../http/body';
import type { HttpOperationGuard } from '../http/http-operation-guard';
import { sendJson } from '../http/respond';
import type { Logger } from '../observability/logger';
import { cleanClientName, type AgentSessions } from './agent-session';
import type { OperationTool } from './operation-tool';

/** The path of the MCP endpoint, and of the RFC 9728 document that says how to get a token for it. */
export const MCP_PATH = '/mcp';
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** The tool that runs a document the agent wrote, offered only with MCP_ALLOW_ARBITRARY_OPERATIONS=true. */
export const ARBITRARY_TOOL = 'graphql_operation';

/** Who an operation runs as and for which agent: the principal looked up, and the name the MCP client gave at initialize. */
export interface AgentCall {
  lookup: PrincipalLookup;
  requestId: string;
  clientName: string;
  remoteAddress(): string | undefined;
}

export interface McpEndpointDeps {
  /** The tools this principal is offered (its audience, MCP_MUTATIONS). */
  toolsFor(principal: Principal): readonly OperationTool[];
  allowArbitraryOperations: boolean;
  /** How a tool's document is named to the pipeline: by hash where only manifest documents run, else by its text. */
  documentOf(tool: OperationTool): Pick<OperationRequest, 'query' | 'documentId'>;
  /** The operation pipeline, as HTTP runs it (GraphqlHttpHandler.execute), for an agent. */
  execute(call: AgentCall, request: OperationRequest): Promise<OperationAnswer>;
  lookupPrincipal(req: IncomingMessage, res: ServerResponse): Promise<PrincipalLookup>;
  guard: HttpOperationGuard;
  /** Mints and reads the Mcp-Session-Id that carries the client's name from initialize to every later request. */
  sessions: AgentSessions;
  maxBodyBytes: number;
  publicUrl(): string;
  /** The app identity's issuer (AUTH_ISSUER), named as the authorization server; none in bank identity. */
  authorizationServer: string | undefined;
  version: string;
  logger: Logger;
}

/**
 * MCP over Streamable HTTP at /mcp, stateless on the server (every POST stands alone, so any instance serves any
 * request; the Mcp-Session-Id is signed and only carries the client's name): the caller's principal as for /graphql,
 * 401 with the RFC 9728 metadata without one, the rate limit, the session id, then a JSON-RPC answer from the SDK's
 * server whose tools are vetted operations run through the pipeline.
 */
export class McpEndpoint {
  constructor(private readonly deps: McpEndpointDeps) {}

  /** The protected-resource metadata (RFC 9728) for /mcp. */
  resourceMetadata(): Record<string, unknown> {
    const base = this.deps.publicUrl();
    return {
      resource: `${base}${MCP_PATH}`,
      authorization_servers: this.deps.authorizationServer === undefined ? [] : [this.deps.authorizationServer],
      bearer_methods_supported: ['header'],
      resource_name: 'bankgraph MCP endpoint',
    };
  }

  async handle(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const started = performance.now();
    if (req.method !== 'POST') {
      // Stateless: no server-initiated stream to open (GET) and no session to end (DELETE).
      sendJson(res, 405, jsonRpcError(-32000, 'This MCP endpoint is stateless: POST JSON-RPC requests; GET streams and DELETE sessions are not served.'), {
        allow: 'POST',
      });
      return;
    }
    const lookup = await this.deps.lookupPrincipal(req, res);
    const { principal } = lookup;
    if (principal.kind !== 'user' && principal.kind !== 'merchant') {
      const reason =
        principal.kind === 'invalid' ? principal.reason : 'Send "Authorization: Bearer <token>": a session token, an app access token or a merchant key.';
      sendJson(res, 401, jsonRpcError(-32001, reason), {
        'www-authenticate': `Bearer resource_metadata="${this.deps.publicUrl()}${PROTECTED_RESOURCE_PATH}"`,
      });
      return;
    }
    if (!(await this.deps.guard.admit(req, res, principal, requestId, started, 'mcp'))) return;
    let body: unknown;
    try {
      body = JSON.parse((await readBody(req, this.deps.maxBodyBytes)).toString('utf8'));
    } catch (error) {
      if (error instanceof PayloadTooLargeError) sendJson(res, 413, jsonRpcError(-32600, `The request body exceeds ${error.limitBytes} bytes.`));
      else sendJson(res, 400, jsonRpcError(-32700, 'The request body is not valid JSON (a JSON-RPC request or batch).'));
      return;
    }
    // One message per request, so the rate limit counts every tool call (the SDK would run a whole batch).
    if (Array.isArray(body) && body.length !== 1) {
      sendJson(res, 400, jsonRpcError(-32600, 'Send one JSON-RPC message per request; batches are not accepted here.'));
      return;
    }
    const session = this.session(req, Array.isArray(body) ? (body[0] as unknown) : body, principal);
    if ('refusal' in session) {
      sendJson(res, session.status, jsonRpcError(session.code, session.refusal));
      return;
    }
    const call: AgentCall = { lookup, requestId, clientName: session.clientName, remoteAddress: () => req.socket.remoteAddress };
    const server = this.server(call);
    // Only an initialize gets a session id (the SDK sends it back); later requests are checked above, not by the SDK.
    const minted = session.minted;
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: minted === undefined ? undefined : () => minted, enableJsonResponse: true });
    res.once('close', () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /**
   * The client's name: from an initialize's clientInfo (and a session id minted to carry it), else from the
   * Mcp-Session-Id the client was given, which must have been minted for this principal.
   */
  private session(
    req: IncomingMessage,
    message: unknown,
    principal: Principal,
  ): { clientName: string; minted?: string } | { status: number; code: number; refusal: string } {
    const binding = `${principal.kind}:${describePrincipal(principal)}`;
    const { method, params } = (typeof message === 'object' && message !== null ? message : {}) as {
      method?: unknown;
      params?: { clientInfo?: { name?: unknown } };
    };
    if (method === 'initialize') {
      const clientName = cleanClientName(params?.clientInfo?.name);
      return { clientName, minted: this.deps.sessions.mint(clientName, binding) };
    }
    const presented = req.headers['mcp-session-id'];
    if (typeof presented !== 'string' || presented === '') {
      return { status: 400, code: -32000, refusal: 'Send initialize first, then the Mcp-Session-Id header its answer gave with every later request.' };
    }
    const clientName = this.deps.sessions.read(presented, binding);
    if (clientName === undefined) {
      return { status: 404, code: -32001, refusal: 'Session not found: this Mcp-Session-Id was not issued here for these credentials. Send initialize again.' };
    }
    return { clientName };
  }

  private server(call: AgentCall): Server {
    const server = new Server({ name: 'bankgraph', version: this.deps.version }, { capabilities: { tools: {} } });
    const tools = this.deps.toolsFor(call.lookup.principal);
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [...tools.map(describeTool), ...(this.deps.allowArbitraryOperations ? [ARBITRARY] : [])],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const { name } = request.params;
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      if (name === ARBITRARY_TOOL && this.deps.allowArbitraryOperations) return this.arbitrary(call, args);
      const tool = tools.find((candidate) => candidate.name === name);
      if (!tool) return toolError(`No tool "${name}" is offered to this caller. Offered: ${tools.map((t) => t.name).join(', ')}.`, 'UNKNOWN_TOOL');
      return this.run(call, { ...this.deps.documentOf(tool), operationName: tool.operationName, variables: args }, tool.notice);
    });
    return server;
  }

  private arbitrary(call: AgentCall, args: Record<string, unknown>): Promise<CallToolResult> {
    const { query, operationName, variables } = args;
    if (typeof query !== 'string') return Promise.resolve(toolError('query must be the GraphQL document text.', 'BAD_USER_INPUT'));
    return this.run(call, {
      query,
      operationName: typeof operationName === 'string' ? operationName : undefined,
      variables: typeof variables === 'object' && variables !== null ? (variables as Record<string, unknown>) : undefined,
    });
  }

  private async run(call: AgentCall, request: OperationRequest, notice?: string): Promise<CallToolResult> {
    let answer: OperationAnswer;
    try {
      answer = await this.deps.execute(call, request);
    } catch (error) {
      if (error instanceof GatewayError) return toolError(error.message, error.code);
      // Never the error's own message: it may name internals; the log keeps it under the request id.
      this.deps.logger.error({ err: error, requestId: call.requestId }, 'an MCP tool call failed');
      return toolError(`The tool failed inside the gateway; quote request id ${call.requestId} to support.`, 'INTERNAL_SERVER_ERROR');
    }
    const { data, errors } = answer.body;
    if (errors?.length) {
      const text = errors.map((error) => `${String(error.extensions?.code ?? 'ERROR')}: ${error.message}`).join('\n');
      return { isError: true, content: [{ type: 'text', text }], structuredContent: { data: data ?? null, errors } };
    }
    if (notice === undefined) return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data ?? {} };
    return { content: [{ type: 'text', text: `${notice}\n${JSON.stringify(data)}` }], structuredContent: { ...data, notice } };
  }
}

const ARBITRARY: Tool = {
  name: ARBITRARY_TOOL,
  description: 'Runs a GraphQL query or mutation of your own against this gateway (only offered where the operator allowed it).',
  inputSchema: {
    type: 'object',
    properties: { query: { type: 'string' }, operationName: { type: 'string' }, variables: { type: 'object' } },
    required: ['query'],
    additionalProperties: false,
  },
};

function describeTool(tool: OperationTool): Tool {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema as Tool['inputSchema'],
    annotations: { readOnlyHint: !tool.needsMutations, destructiveHint: false, openWorldHint: false },
  };
}

function toolError(message: string, code: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${code}: ${message}` }], structuredContent: { errors: [{ message, extensions: { code } }] } };
}

function jsonRpcError(code: number, message: string): Record<string, unknown> {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}
