import { ConfigError, loadConfig } from '../config';
import { MOCK_BANK_PASSWORD } from '../sandbox/fixtures/users';
import { signInAt } from './gateway-sign-in';

const USAGE = [
  'usage: npm run -s sandbox:login -- <user> [--password <password>] [--gateway <url>]',
  '  Signs <user> in to a running gateway through the sandbox bank and prints the session token,',
  '  for `Authorization: Bearer <token>`. Seeded users: john, jane, lee (password doe).',
  '  --gateway defaults to PUBLIC_URL, else http://localhost:$PORT (4000).',
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
  let gateway = args.gateway;
  if (gateway === undefined) {
    const config = loadConfig();
    gateway = config.publicUrl ?? `http://localhost:${config.port}`;
  }
  try {
    console.log(await signInAt(gateway.replace(/\/+$/, ''), args.username, args.password));
  } catch (error) {
    const reason = error instanceof Error ? (error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message) : String(error);
    console.error(`sign-in at ${gateway} failed: ${reason}\nIs the gateway running (npm start) with the sandbox provider?`);
    process.exit(1);
  }
}

void main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
