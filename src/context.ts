import type { Principal } from './auth/principal';
import { requireUser } from './auth/principal';
import { DataLoaders } from './datasources/data.loaders';
import type { CacheMode } from './datasources/response-cache';
import type { Logger } from './logger';
import type { Services } from './services';

/** Per request (HTTP) or per subscription operation (WebSocket). */
export interface GatewayContext {
  requestId: string;
  principal: Principal;
  services: Services;
  logger: Logger;
  cacheMode: CacheMode;
  /** The signed-in user's loaders; UNAUTHENTICATED / FORBIDDEN for any other principal. */
  dataLoaders(): DataLoaders;
  /**
   * Set once the operation is known: whether its answer may be stored in the AnswerCache (src/http/answer-cache.ts).
   * An object, not a flag, because Apollo hands plugins a shallow copy of the context.
   */
  answer: { cacheable: boolean; operationName?: string };
  /** Until when everything this request read from the data cache stays fresh (epoch ms); 0 when it read nothing. */
  dataFreshUntilMs(): number;
}

export function createContext(services: Services, principal: Principal, requestId: string, cacheMode: CacheMode): GatewayContext {
  let loaders: DataLoaders | undefined;
  let logger: Logger | undefined;
  return {
    requestId,
    principal,
    services,
    // Made on first use: most operations never log, and an idle subscription should not carry a logger of its own.
    get logger() {
      return (logger ??= services.logger.child({ requestId, principal: describePrincipal(principal) }));
    },
    cacheMode,
    answer: { cacheable: false },
    dataFreshUntilMs: () => (loaders && Number.isFinite(loaders.freshUntilMs) ? loaders.freshUntilMs : 0),
    dataLoaders() {
      const user = requireUser(principal);
      loaders ??= new DataLoaders(
        services.data,
        services.responseCache,
        { userId: user.userId, bearer: services.userTokens.bearerFor(user.sessionToken, user.session.tokens) },
        cacheMode,
        { requestId },
      );
      return loaders;
    },
  };
}

/** For logs: who, without anything that would let a reader act as them. */
export function describePrincipal(principal: Principal): string {
  switch (principal.kind) {
    case 'user':
      return principal.userId;
    case 'merchant':
      return principal.keyId;
    default:
      return principal.kind;
  }
}
