import { jsonLineLog } from './log';
import { createSandbox, type Sandbox, type SandboxOptions } from './sandbox';

/**
 * `npm run sandbox`: the mock provider on its own port. Configuration comes from the environment, is validated
 * here (the sandbox imports nothing from the gateway, so not from its config either), and a bad value stops
 * start-up with a message naming the variable and what it accepts.
 */
export function sandboxOptionsFromEnv(env: NodeJS.ProcessEnv): SandboxOptions | { error: string } {
  const problems: string[] = [];
  const read = <T>(name: string, fallback: T, parse: (raw: string) => T | undefined, accepts: string): T => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const value = parse(raw.trim());
    if (value === undefined) problems.push(`${name}=${JSON.stringify(raw)} is not valid: it accepts ${accepts}`);
    return value ?? fallback;
  };
  const integer = (min: number, max: number) => (raw: string) => (/^\d+$/.test(raw) && Number(raw) >= min && Number(raw) <= max ? Number(raw) : undefined);
  const token = (raw: string) => (/^[\x21-\x7e]{1,200}$/.test(raw) ? raw : undefined);
  const options: SandboxOptions = {
    port: read('SANDBOX_PORT', 4010, integer(0, 65535), 'an integer port from 0 to 65535 (0 picks a free port)'),
    latencyMs: read('SANDBOX_LATENCY_MS', 0, integer(0, 60_000), 'an integer number of milliseconds from 0 to 60000'),
    timeScale: read(
      'SANDBOX_TIME_SCALE',
      1,
      (raw) => (/^\d+(\.\d+)?$/.test(raw) && Number(raw) > 0 && Number(raw) <= 1_000_000 ? Number(raw) : undefined),
      'a positive number of sandbox seconds per real second, at most 1000000 (e.g. 1, 60, 0.5)',
    ),
    clientId: read('SANDBOX_CLIENT_ID', undefined, token, '1 to 200 printable ASCII characters without spaces'),
    clientSecret: read('SANDBOX_CLIENT_SECRET', undefined, token, '1 to 200 printable ASCII characters without spaces'),
  };
  return problems.length > 0 ? { error: problems.join('\n') } : options;
}

export function describeSandbox(sandbox: Sandbox): string {
  const { client, fixtures } = sandbox.context;
  const named = fixtures.users.filter((user) => !/^user\d+$/.test(user.username));
  const logins = named.map(
    (user) =>
      `    ${user.username} / ${user.password} at ${user.providerId}   (${user.name}: ${count(user.accounts.length, 'account')}, ${count(user.cards.length, 'card')})`,
  );
  const extra = fixtures.users.length - named.length;
  return [
    `sandbox provider listening on ${sandbox.url}`,
    `  auth, verification, payouts, payments and data URLs: ${sandbox.url}`,
    `  bank sign-in page: ${sandbox.url}/?response_type=code&client_id=${encodeURIComponent(client.clientId)}&redirect_uri=...`,
    '  mock bank logins:',
    ...logins,
    ...(extra > 0 ? [`    user1 .. user${extra} / ${fixtures.users[named.length]!.password}`] : []),
    `  client_id:     ${client.clientId}`,
    `  client_secret: ${client.clientSecret}`,
    `  redirect URIs: ${client.redirectUris.join(', ')} (any port on loopback hosts)`,
    `  control routes: ${sandbox.url}/sandbox/...`,
  ].join('\n');
}

const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

async function main(): Promise<void> {
  const options = sandboxOptionsFromEnv(process.env);
  if ('error' in options) {
    console.error(`sandbox: bad configuration\n${options.error}`);
    process.exit(1);
  }
  let sandbox: Sandbox;
  try {
    sandbox = await createSandbox(options);
  } catch (error) {
    console.error(`sandbox: cannot start on port ${options.port}: ${(error as Error).message}`);
    process.exit(1);
  }
  console.log(describeSandbox(sandbox));
  const log = jsonLineLog();
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      log.warn('second signal: exiting now', { signal });
      process.exit(1);
    }
    stopping = true;
    log.info('stopping', { signal });
    sandbox.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error('error while stopping', { err: error });
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

if (require.main === module) void main();
