import type { AppIdentityConfig } from '../platform/config/config';
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

export interface IdentitySettings {
  /** The app's identity provider (APP_IDENTITY_*), when app tokens are accepted. */
  appIdentity: AppIdentityConfig | undefined;
  merchantKeys: readonly string[];
  /** TOKEN_ENCRYPTION_KEY; derived from the store's address when unset (development). */
  tokenEncryptionKey: Buffer | undefined;
  storeUrl: string;
  sessionIdleTimeoutMs: number;
}

export interface IdentityDeps {
  settings: IdentitySettings;
  database: Database;
  auth: AuthClient;
  /** The event bus and the topic identity events travel on. */
  bus: EventChannel;
  topic: string;
  held: HeldForUsers;
  /** Epoch ms: sessions, connections and bank tokens are timed on it. */
  clock: () => number;
}

/** The identity module's parts, built once per gateway. */
export interface Identity {
  /** Revokes users, bank connections and sessions, then announces it. */
  service: IdentityService;
  userTokens: UserTokenProvider;
  sessions: SessionStore;
  loginStates: LoginStateStore;
  connections: ConnectionStore;
  principals: PrincipalResolver;
  identityEvents: IdentityEvents;
  revocations: RecentRevocations;
  merchantKeys: MerchantKeys;
}

export function createIdentity({ settings, database, auth, bus, topic, held, clock }: IdentityDeps): Identity {
  const sessions = new SessionStore(database, undefined, { idleTimeoutMs: settings.sessionIdleTimeoutMs, now: clock });
  const revocations = new RecentRevocations();
  const cipher = new TokenCipher(tokenEncryptionKey(settings.tokenEncryptionKey, settings.storeUrl));
  const connections = new ConnectionStore(database, cipher, clock);
  const merchantKeys = new MerchantKeys(settings.merchantKeys);
  const identityEvents = new IdentityEvents({ bus, topic });
  const appTokens = settings.appIdentity && new AppTokenVerifier(settings.appIdentity);
  return {
    service: new IdentityService({ connections, sessions, events: identityEvents, held }),
    userTokens: new UserTokenProvider(connections, auth, clock),
    sessions,
    loginStates: new LoginStateStore(database, cipher, clock),
    connections,
    principals: new PrincipalResolver({ merchantKeys, sessions, connections, appTokens, revocations }),
    identityEvents,
    revocations,
    merchantKeys,
  };
}
