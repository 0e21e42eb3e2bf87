import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { crossFieldProblems, productionProblems } from './refusals';
import { VARIABLE_NAMES, variablesSchema, type Env } from './schema';
import { toConfig, type Config, type ProviderConfig, type ResolvedConfig } from './shape';
import { port, urlOf } from './variables';

export type * from './shape';
export type { Env } from './schema';

/**
 * The only reader of process.env. Every variable is validated by the schema (./schema.ts, the one home of every
 * default), and a bad one stops start-up with a message that names it and says what it accepts; with none set,
 * `npm start` works.
 */

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  }
}

/** Issues in the order the schema lists the variables, each message once. */
function problemsOf(error: z.ZodError): string[] {
  const rank = (issue: z.core.$ZodIssue): number => {
    const index = VARIABLE_NAMES.indexOf(String(issue.path[0]));
    return index === -1 ? VARIABLE_NAMES.length : index;
  };
  return [...new Set([...error.issues].sort((a, b) => rank(a) - rank(b)).map((issue) => issue.message))];
}

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const parsed = variablesSchema.safeParse({ ...env, PROVIDER: env.PROVIDER ?? 'sandbox' });
  if (!parsed.success) throw new ConfigError(problemsOf(parsed.error));
  const vars = parsed.data;
  const problems = crossFieldProblems(vars, env);
  const config = toConfig(vars, vars.MERCHANT_KEYS);
  if (config.server.nodeEnv === 'production') problems.push(...productionProblems(config, vars, env));
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/** The provider's addresses and credentials, once known: PROVIDER=remote's own, or the sandbox's once it listens (index.ts, the tests). */
export function withProvider(config: Readonly<Config>, provider: ProviderConfig): Readonly<ResolvedConfig> {
  const { kind: _kind, ...addresses } = { kind: undefined, ...provider };
  return Object.freeze({ ...config, provider: { ...addresses, kind: config.provider.kind } });
}

/**
 * What a client tool on this machine (`npm run sandbox:login`) learns from the environment about where the gateway
 * runs: PUBLIC_URL and PORT when they are set, nothing else (the rest of the configuration is the gateway's).
 */
export function loadGatewayAddress(env: Env = process.env): Readonly<{ publicUrl?: string; port?: number }> {
  const parsed = z.object({ PUBLIC_URL: urlOf('PUBLIC_URL').optional(), PORT: port('PORT', 4000).optional() }).safeParse(env);
  if (!parsed.success) throw new ConfigError(problemsOf(parsed.error));
  return { publicUrl: parsed.data.PUBLIC_URL, port: env.PORT === undefined ? undefined : parsed.data.PORT };
}

/**
 * Where this OS user's development tools keep runtime files (the registry of running gateways): XDG_RUNTIME_DIR, a
 * folder the XDG spec reserves for the user alone, when it is an absolute path (the spec says to ignore any other).
 */
export function loadRuntimeDir(env: Env = process.env): string | undefined {
  const dir = env.XDG_RUNTIME_DIR?.trim();
  return dir && isAbsolute(dir) ? dir : undefined;
}
