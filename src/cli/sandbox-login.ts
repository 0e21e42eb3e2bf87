import { ConfigError, loadGatewayAddress } from '../platform/config/config';
import { MOCK_BANK_PASSWORD } from '../sandbox/fixtures/users';
import { RegistryFolderError, runningGateways } from './gateway.registry';
import { signInAt } from './gateway-sign-in';

const USAGE = [
  'usage: npm run -s sandbox:login -- <user> [--password <password>] [--gateway <url>]',
  '  Signs <user> in to a running gateway through the sandbox bank and prints the session token,',
  '  for `Authorization: Bearer <token>`. Seeded users: john, jane, lee (password doe).',
  '  The gateway: --gateway, else PUBLIC_URL, else http://localhost:$PORT, else the one `npm start` runs on this machine.',
].join('\n');

interface Arguments {
  username: string;
  password: string;
  gateway: string | undefined;
}

function parseArguments(argv: string[]): Arguments | { error: string } {
  const positional: string[] = [];
  const options: Record<string, string> = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return { error: '' };
    if (arg === '--password' || arg === '--gateway') {
      const value = argv[i + 1];
      if (value === undefined) return { error: `${arg} needs a value` };
      options[arg.slice(2)] = value;
      i += 1;
    } else if (arg.startsWith('-')) {
      return { error: `unknown option ${arg}; accepted: --password, --gateway` };
    } else {
      positional.push(arg);
    }
  }
  if (positional.length !== 1) return { error: `expected exactly one user name, got ${positional.length}` };
  return { username: positional[0]!, password: options.password ?? MOCK_BANK_PASSWORD, gateway: options.gateway };
}

/** `npm run sandbox:login -- <user>`: a session token for scripts and curl, through the real sign-in. */
async function main(): Promise<void> {
  const args = parseArguments(process.argv.slice(2));
  if ('error' in args) {
    console.error(args.error ? `${args.error}\n${USAGE}` : USAGE);
    process.exit(args.error ? 2 : 0);
  }
  const gateway = (args.gateway ?? (await findGateway())).replace(/\/+$/, '');
  try {
    console.log(await signInAt(gateway, args.username, args.password));
  } catch (error) {
    console.error(
      isRefused(error)
        ? `no gateway answers at ${gateway}. ${HOW_TO_POINT}`
        : `sign-in at ${gateway} failed: ${reasonOf(error)}\nIs the gateway running (npm start) with the sandbox provider?`,
    );
    process.exit(1);
  }
}

const HOW_TO_POINT =
  'Start one with `npm start`, or say where it runs: --gateway <url>, or the PORT (or PUBLIC_URL) it was started with, e.g. PORT=4610 npm run -s sandbox:login -- john';

/** Where to sign in when --gateway is not given: what the environment says, else the gateway `npm start` runs here. */
async function findGateway(): Promise<string> {
  const { publicUrl, port } = loadGatewayAddress();
  if (publicUrl) return publicUrl;
  if (port !== undefined) return `http://localhost:${port}`;
  const running = await runningGateways();
  if (running.length === 0) throw new CliError(`no running gateway found on this machine. ${HOW_TO_POINT}`);
  const here = running.filter((gateway) => gateway.cwd === process.cwd());
  const candidates = here.length > 0 ? here : running;
  if (candidates.length > 1) {
    const list = candidates.map((gateway) => `${gateway.url} (pid ${gateway.pid})`).join(', ');
    throw new CliError(`${candidates.length} gateways are running: ${list}. Choose one with --gateway <url>.`);
  }
  return candidates[0]!.url;
}

class CliError extends Error {}

function isRefused(error: unknown): boolean {
  return error instanceof Error && (error.cause as { code?: unknown } | undefined)?.code === 'ECONNREFUSED';
}

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
}

void main().catch((error: unknown) => {
  console.error(error instanceof ConfigError || error instanceof CliError || error instanceof RegistryFolderError ? error.message : error);
  process.exit(1);
});
