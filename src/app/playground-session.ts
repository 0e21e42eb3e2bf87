import type { IncomingMessage } from 'node:http';
import type { ResolvedConfig } from '../platform/config/config';
import type { Logger } from '../platform/observability/logger';
import type { PlaygroundSession } from '../playground/playground.routes';
import type { Identity } from '../identity';
import type { DataClient } from '../platform/provider/data.client';

const FIXTURES_TIMEOUT_MS = 5_000;

/** What the banner's session reads: who the cookie names, their connections, and the bank's info with their token. */
export interface PlaygroundSessionDeps {
  identity: Pick<Identity, 'principals' | 'connections' | 'userTokens'>;
  data: Pick<DataClient, 'info'>;
  logger: Logger;
}

/**
 * The playground banner's session: the user the session cookie names and, for a person to read, the holder's full
 * name as the bank gives it for the user's own first active connection (scope info). The name is read with that
 * connection's token only, so it is never anyone else's; without one (or when the bank does not answer) it is left
 * out and the banner shows the user id.
 */
export function playgroundSession(deps: PlaygroundSessionDeps): (req: IncomingMessage) => Promise<PlaygroundSession> {
  const { logger } = deps;
  return async (req) => {
    const principal = await deps.identity.principals.resolve({ cookie: req.headers.cookie });
    if (principal.kind !== 'user') return principal.kind === 'invalid' ? { signedIn: false, reason: principal.reason } : { signedIn: false };
    const holderName = await holderNameOf(deps, principal.userId).catch((error: unknown) => {
      logger.warn({ err: error }, 'the playground could not read the holder name of the signed-in user');
      return undefined;
    });
    return { signedIn: true, userId: principal.userId, ...(holderName ? { holderName } : {}) };
  };
}

async function holderNameOf(deps: PlaygroundSessionDeps, userId: string): Promise<string | undefined> {
  const connection = (await deps.identity.connections.connectionsOf(userId)).find((candidate) => candidate.status === 'active');
  if (!connection) return undefined;
  const info = await deps.data.info(deps.identity.userTokens.bearerFor(connection.id));
  return info.find((entry) => typeof entry.full_name === 'string' && entry.full_name.trim() !== '')?.full_name;
}

/**
 * On the sandbox provider, a payment the sandbox seeded that can be refunded, read from its fixtures for the
 * playground's Payment tab; undefined with a remote provider, whose payments only its merchant knows.
 */
export function seededPaymentId(config: ResolvedConfig, logger: Logger): (() => Promise<string | undefined>) | undefined {
  if (config.provider.kind !== 'sandbox') return undefined;
  const fixturesUrl = new URL('/sandbox/fixtures', config.provider.paymentsUrl);
  return async () => {
    try {
      const response = await fetch(fixturesUrl, { signal: AbortSignal.timeout(FIXTURES_TIMEOUT_MS) });
      if (!response.ok) throw new Error(`GET ${fixturesUrl.pathname} answered HTTP ${response.status}`);
      const { payments } = (await response.json()) as { payments?: { id: string; status: string }[] };
      return payments?.find((payment) => payment.status === 'settled')?.id;
    } catch (error) {
      logger.warn({ err: error }, "the playground could not read the sandbox's seeded payments; its Payment tab keeps a placeholder");
      return undefined;
    }
  };
}
