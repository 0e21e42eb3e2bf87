import type { ResolvedConfig } from '../platform/config/config';
import type { Database } from '../platform/db/database';
import type { AuthClient } from '../platform/provider/auth.client';
import { RecentRevocations } from '../platform/access/recent-revocations';
import { AppTokenVerifier } from './app-token.verifier';
import { ConnectionStore } from './connection.store';
import { tokenEncryptionKey } from './encryption-key';
import { IdentityEvents, type EventChannel } from './identity-events';
import { IdentityService, type HeldForUsers } from './identity.service';
import { LoginStateStore } from './login-state.store';
import { MerchantKeys, PrincipalResolver } from './principal';
import { SessionStore } from './session.store';
import { TokenCipher } from './token-cipher';
import { UserTokenProvider } from './user-token.provider';

export interface IdentityDeps {
  config: Pick<ResolvedConfig, 'identity' | 'store' | 'live'>;
  database: Database;
  auth: AuthClient;
  /** The event bus and the topic identity events travel on. */
  bus: EventChannel;
  topic: string;
  held: HeldForUsers;
}

/** The identity module's parts, built once per gateway (they keep the names the gateway's services give them). */
export interface Identity {
  identity: IdentityService;
  userTokens: UserTokenProvider;
  sessions: SessionStore;
  loginStates: LoginStateStore;
  connections: ConnectionStore;
  principals: PrincipalResolver;
  identityEvents: IdentityEvents;
  revocations: RecentRevocations;
  merchantKeys: MerchantKeys;
}

export function createIdentity({ config, database, auth, bus, topic, held }: IdentityDeps): Identity {
  const sessions = new SessionStore(database, undefined, { idleTimeoutMs: config.live.sessionIdleTimeoutMs });
  const revocations = new RecentRevocations();
  const cipher = new TokenCipher(tokenEncryptionKey(config.identity.tokenEncryptionKey, config.store.url));
  const connections = new ConnectionStore(database, cipher);
  const merchantKeys = new MerchantKeys(config.identity.merchantKeys);
  const identityEvents = new IdentityEvents({ bus, topic });
  const appTokens = config.identity.app && new AppTokenVerifier(config.identity.app);
  return {
    identity: new IdentityService({ connections, sessions, events: identityEvents, held }),
    userTokens: new UserTokenProvider(connections, auth),
    sessions,
    loginStates: new LoginStateStore(database, cipher),
    connections,
    principals: new PrincipalResolver({ merchantKeys, sessions, connections, appTokens, revocations }),
    identityEvents,
    revocations,
    merchantKeys,
  };
}
