/**
 * The identity module's face: sign-in routes, sessions, users and their bank connections, app tokens, principals
 * and revocations. Who is asking (the Principal and its guards) is platform's (src/platform/access), as every
 * transport needs it.
 */
export { createIdentity, type Identity, type IdentityDeps, type IdentitySettings } from './identity.module';
export { tokenEncryptionKey } from './encryption-key';
export { IdentityService, type HeldForUsers } from './identity.service';
export { IdentityEvents, type IdentityEvent } from './identity-events';
export type { BankConnectionRecord, BankConnectionStatus, ConnectionStore } from './connection.store';
export type { UserTokenProvider } from './user-token.provider';
export type { PrincipalResolver, MerchantKeys } from './principal';
export { type Session, type SessionStore, sessionKey } from './session.store';
export type { LoginStateStore } from './login-state.store';
export { handleAuthRoute, type AuthRoutesDeps } from './auth.routes';
export { principalCheck } from './principal-recheck';
export { BankConnectionResolver } from './bank-connection.resolver';
export { UserResolver } from './user.resolver';
export { BankConnection } from './bank-connection.type';
export { ConnectionStatus } from './connection-status.enum';
export { toBankConnection } from './bank-connection.mapper';
export { BANK_CONNECTION_TAG, USER_TAG } from './bank-connection.type';
export { bankConnectionNodeType } from './bank-connection-node.resolver';
