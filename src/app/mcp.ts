import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { GraphQLSchema } from 'graphql';
import type { ResolvedConfig } from '../platform/config/config';
import type { GraphqlHttpHandler, GraphqlHttpDeps } from '../platform/graphql/http-handler';
import type { OperationPipeline } from '../platform/graphql/operation-pipeline';
import type { HttpOperationGuard } from '../platform/http/http-operation-guard';
import { tokenEncryptionKey } from '../identity';
import { AgentSessions } from '../platform/mcp/agent-session';
import { McpEndpoint } from '../platform/mcp/mcp-endpoint';
import type { Logger } from '../platform/observability/logger';
import { operationTool, type OperationTool } from '../platform/mcp/operation-tool';

/** The vetted operations agents may run, one per file; `npm run persist` puts them in the manifest too. */
export const MCP_TOOLS_DIR = 'operations/mcp';

/** The folder from the source tree (src/app) or the build (dist/src/app) alike. */
function toolsDir(): string {
  const candidates = [resolve(__dirname, '../..', MCP_TOOLS_DIR), resolve(__dirname, '../../..', MCP_TOOLS_DIR)];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found) throw new Error(`The MCP tools folder ${MCP_TOOLS_DIR} was not found beside the gateway (looked in ${candidates.join(', ')})`);
  return found;
}

/** Every tool in operations/mcp, checked against the schema (a broken file stops start-up, naming it). */
export function loadMcpTools(schema: GraphQLSchema): OperationTool[] {
  const dir = toolsDir();
  return readdirSync(dir)
    .filter((file) => file.endsWith('.graphql'))
    .sort()
    .map((file) => operationTool(join(MCP_TOOLS_DIR, file), readFileSync(join(dir, file), 'utf8'), schema));
}

export interface McpWiring {
  config: ResolvedConfig;
  schema: GraphQLSchema;
  pipeline: OperationPipeline;
  graphql: GraphqlHttpHandler;
  guard: HttpOperationGuard;
  lookupPrincipal: GraphqlHttpDeps['lookupPrincipal'];
  logger: Logger;
  publicUrl(): string;
}

/** /mcp: the tools a principal's kind may use, money tools only with MCP_MUTATIONS=propose, run as /graphql runs them. */
export function createMcpEndpoint(wiring: McpWiring): McpEndpoint {
  const { config, pipeline, graphql } = wiring;
  const tools = loadMcpTools(wiring.schema).filter((tool) => !tool.needsMutations || config.mcp.mutations === 'propose');
  return new McpEndpoint({
    toolsFor: (principal) => tools.filter((tool) => tool.audience === 'any' || tool.audience === principal.kind),
    allowArbitraryOperations: config.mcp.allowArbitraryOperations,
    documentOf: (tool) => (pipeline.persistedMode === 'only' ? { documentId: `sha256:${tool.sha256}` } : { query: tool.text }),
    execute: (call, request) => graphql.execute(call.lookup, call.requestId, request, call.remoteAddress, { clientName: call.clientName }),
    lookupPrincipal: wiring.lookupPrincipal,
    guard: wiring.guard,
    // The token encryption key is the secret every instance of a deployment already shares (resolved as identity does).
    sessions: new AgentSessions(tokenEncryptionKey(config.identity.tokenEncryptionKey, config.store.url)),
    maxBodyBytes: config.limits.operation.maxBodyBytes,
    publicUrl: wiring.publicUrl,
    authorizationServer: config.identity.app?.issuer,
    version: '0.1.0',
    logger: wiring.logger,
  });
}
