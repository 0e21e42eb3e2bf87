/**
 * The relational store's tables as Kysely sees them (camelCase here, snake_case in SQL: CamelCasePlugin).
 * Conventions, the same on SQLite and PostgreSQL so one migration serves both:
 * - times are epoch milliseconds in integer/bigint columns named `...AtMs` (exact, and cheap to compare for windows);
 * - amounts are integer minor units; JSON documents are text, parsed by the owning store;
 * - booleans are integers 0/1.
 * Each feature's tables are declared in its own section and created by its own migration (src/db/migrations/).
 */
export interface Tables extends IdentityTables {
  leases: LeasesTable;
}

/** A named lease (background jobs run by one instance at a time): who holds it and until when. */
export interface LeasesTable {
  name: string;
  holder: string;
  expiresAtMs: number;
}

/** Identity (0003_identity): the users, their bank connections, gateway sessions and pending sign-ins. */
export interface IdentityTables {
  users: UsersTable;
  bankConnections: BankConnectionsTable;
  connectionResources: ConnectionResourcesTable;
  sessions: SessionsTable;
  loginStates: LoginStatesTable;
}

/** A durable user. App identity sets (issuer, subject); a bank-identity user has neither. */
export interface UsersTable {
  id: string;
  issuer: string | null;
  subject: string | null;
  createdAtMs: number;
  /** Set when the user is revoked: their sessions and connections stop working. */
  revokedAtMs: number | null;
}

export type ConnectionStatus = 'active' | 'expired' | 'revoked';

/** One authorization-code grant at one bank. Tokens are AES-256-GCM ciphertexts (src/identity/token-cipher.ts). */
export interface BankConnectionsTable {
  id: string;
  userId: string;
  providerId: string;
  scopes: string;
  refreshTokenEnc: string;
  accessTokenEnc: string;
  accessExpiresAtMs: number;
  status: ConnectionStatus;
  createdAtMs: number;
  refreshedAtMs: number;
}

/** An account or card id a connection has shown: how a later sign-in is recognised as the same person. */
export interface ConnectionResourcesTable {
  connectionId: string;
  kind: 'account' | 'card';
  providerId: string;
  resourceId: string;
}

/** A gateway session: keyed by the SHA-256 of its token, so the table holds nothing that signs anyone in. */
export interface SessionsTable {
  key: string;
  userId: string;
  createdAtMs: number;
  expiresAtMs: number;
}

/** A sign-in between /auth/login and /auth/callback; `bindingHash` ties it to the browser or app that started it. */
export interface LoginStatesTable {
  state: string;
  bindingHash: string;
  codeVerifier: string;
  returnTo: string | null;
  responseMode: 'cookie' | 'json';
  /** The user the new connection joins (signed in already, or the app's user); null: bank identity decides. */
  userId: string | null;
  expiresAtMs: number;
}
