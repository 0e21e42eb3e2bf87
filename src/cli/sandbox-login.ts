import { ConfigError, loadGatewayAddress } from '../platform/config/config';
import { MOCK_BANK_PASSWORD } from '../sandbox/fixtures/users';
import { RegistryFolderError, runningGateways } from './gateway.registry';
import { signInAt } from './gateway-sign-in';

const USAGE = [
  'usage: npm run -s sandbox:login -- <user> [--password <password>] [--gateway <url>]',
  '  Signs <user> in to a running gateway through the sandbox bank and prints the session token,',
  `  for \`Authorization: Bearer <token>\`. Every seeded login's password is ${MOCK_BANK_PASSWORD}.`,
  '  The gateway: --gateway, else PUBLIC_URL, else http://localhost:$PORT, else the one `npm start` runs on this machine.',
].join('\n');

const FIXTURES_TIMEOUT_MS = 10_000;

interface Arguments {
  username: string;
  password: string;
  gateway: string | undefined;
}

/** --help: the usage, then the logins of the sandbox behind the gateway the other arguments name. */
interface HelpRequest {
  help: true;
  gateway: string | undefined;
}

interface FixtureLogin {
  username: string;
  providerId: string;
  name: string;
  accounts: unknown[];
  cards: unknown[];
}

function parseArguments(argv: string[]): Arguments | HelpRequest | { error: string } {
  const positional: string[] = [];
  const options: Record<string, string> = {};
  let help = false;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') {
      help = true;
    } else if (arg === '--password' || arg === '--gateway') {
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
  if (help) return { help: true, gateway: options.gateway };
  if (positional.length !== 1) return { error: `expected exactly one user name, got ${positional.length}` };
  return { username: positional[0]!, password: options.password ?? MOCK_BANK_PASSWORD, gateway: options.gateway };
}

/** `npm run sandbox:login -- <user>`: a session token for scripts and curl, through the real sign-in. */
async function main(): Promise<void> {
  const args = parseArguments(process.argv.slice(2));
  if ('error' in args) {
    console.error(`${args.error}\n${USAGE}`);
    process.exit(2);
  }
  if ('help' in args) {
    console.log(`${USAGE}\n\n${await describeLogins(args.gateway)}`);
    return;
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

/**
 * The sandbox's seeded logins, as its GET /sandbox/fixtures lists them, found through the gateway: its sign-in
 * sends the browser to the sandbox bank, whose origin serves the fixtures. Without a reachable gateway or sandbox,
 * it says so and how to list them.
 */
async function describeLogins(gatewayArgument: string | undefined): Promise<string> {
  let gateway: string | undefined;
  try {
    gateway = (gatewayArgument ?? (await findGateway())).replace(/\/+$/, '');
    const fixturesUrl = await sandboxFixturesUrl(gateway);
    const response = await fetch(fixturesUrl, { signal: AbortSignal.timeout(FIXTURES_TIMEOUT_MS) });
    if (!response.ok) throw new CliError(`GET ${fixturesUrl} answered HTTP ${response.status}`);
    const { users } = (await response.json()) as { users: FixtureLogin[] };
    return [`Logins of the sandbox behind ${gateway} (GET ${fixturesUrl}):`, ...users.map(describeLogin)].join('\n');
  } catch (error) {
    const where = gateway ? `the sandbox behind ${gateway}` : 'a running gateway';
    return [
      `The seeded logins could not be read from ${where} (${error instanceof CliError ? error.message : reasonOf(error)}).`,
      'To see them, start the gateway (`npm start`) and run --help again (with --gateway <url> if it runs elsewhere),',
      'or ask the sandbox itself: curl <sandbox url>/sandbox/fixtures (the gateway prints the sandbox url when it starts).',
    ].join('\n');
  }
}

function describeLogin(login: FixtureLogin): string {
  const holds = [plural(login.accounts.length, 'account'), plural(login.cards.length, 'card')].join(', ');
  return `  ${login.username.padEnd(10)} at ${login.providerId.padEnd(11)} ${login.name} (${holds})`;
}

const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** Where the sandbox bank's fixtures are: the origin the gateway's /auth/login redirects to. */
async function sandboxFixturesUrl(gateway: string): Promise<string> {
  const start = await fetch(`${gateway}/auth/login?response=json`, { redirect: 'manual', signal: AbortSignal.timeout(FIXTURES_TIMEOUT_MS) });
  const bankPage = start.headers.get('location');
  if (start.status !== 302 || !bankPage) {
    throw new CliError(`${gateway}/auth/login answered HTTP ${start.status}, not a redirect to a sandbox bank`);
  }
  return new URL('/sandbox/fixtures', new URL(bankPage, gateway)).toString();
}

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
