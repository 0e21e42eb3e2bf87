/**
 * The relational store's tables as Kysely sees them (camelCase here, snake_case in SQL: CamelCasePlugin).
 * Conventions, the same on SQLite and PostgreSQL so one migration serves both:
 * - times are epoch milliseconds in integer/bigint columns named `...AtMs` (exact, and cheap to compare for windows);
 * - amounts are integer minor units; JSON documents are text, parsed by the owning store;
 * - booleans are integers 0/1.
 * Each feature's tables are declared in its own section and created by its own migration (src/platform/db/migrations/).
 */
export interface Tables extends IdentityTables {
  leases: LeasesTable;
  payouts: PayoutsTable;
  payoutFingerprints: PayoutFingerprintsTable;
  beneficiaries: BeneficiariesTable;
  dataTaskRequests: DataTaskRequestsTable;
  dataTasks: DataTasksTable;
  refundKeys: RefundKeysTable;
  refundGeneratedKeys: RefundGeneratedKeysTable;
  webhookEvents: WebhookEventsTable;
}

/** A named lease (background jobs run by one instance at a time): who holds it and until when. */
export interface LeasesTable {
  name: string;
  holder: string;
  expiresAtMs: number;
}

/** A payout recorded by the gateway (src/payouts/payout.store.ts), from before the provider is called. */
export interface PayoutsTable {
  transactionId: string;
  /** `user:<userId>` or `merchant:<keyId>`. */
  owner: string;
  status: string;
  currency: string;
  amountInMinor: number;
  /** The exact withdrawal request (JSON), so a retry resends the same bytes. */
  request: string;
  /** The request's beneficiary IBAN, for the daily cap per IBAN across users. */
  beneficiaryIban: string;
  /** The provider's withdrawal as last seen (JSON); null until it confirmed the payout. */
  withdrawal: string | null;
  /** The last failed submission (JSON: code and when), for logs and support. */
  lastError: string | null;
  declineReason: string | null;
  /** The MCP client that proposed it for its owner (initiatedBy agent); null when the owner asked directly. */
  agentClient: string | null;
  /** Which instance is sending it to the provider, and until when that claim holds. */
  claimedBy: string | null;
  claimedUntilMs: number | null;
  /** When it became sendable (recorded, or approved): PAYOUT_SUBMISSION_EXPIRY and the daily limits count from here. */
  queuedAtMs: number;
  createdAtMs: number;
  updatedAtMs: number;
}

/** An identical createPayout without transactionId, within its window, answers the payout it names. */
export interface PayoutFingerprintsTable {
  fingerprint: string;
  transactionId: string;
  expiresAtMs: number;
}

/** An IBAN a user verified (verifyAccountHolder), with the holder name the bank reported. */
export interface BeneficiariesTable {
  userId: string;
  iban: string;
  name: string;
  verifiedAtMs: number;
}

/** What startDataTask asked for, keyed by the hash of the task's webhook secret (never the secret itself). */
export interface DataTaskRequestsTable {
  tokenHash: string;
  userId: string;
  /** The starting session's key (a hash, not its token): whose bank token fetches results the webhook never brought. */
  /** The bank connection the task runs through (0003_identity; null for tasks started before it). */
  connectionId: string | null;
  resource: string;
  /** The provider call made (JSON). */
  request: string;
  taskId: string | null;
  createdAtMs: number;
}

/** One provider task of a request, as its notifications (or the reconciler) left it. */
export interface DataTasksTable {
  taskId: string;
  tokenHash: string;
  status: string;
  providerStatus: string | null;
  failureReason: string | null;
  /** The provider's results (JSON), kept by the first reader after success. */
  results: string | null;
  completedAtMs: number | null;
  createdAtMs: number;
  updatedAtMs: number;
}

/** One refund request under one idempotency key, written before the provider is called. */
export interface RefundKeysTable {
  idempotencyKey: string;
  fingerprint: string;
  paymentId: string;
  /** The provider request (JSON). */
  request: string;
  /** 1 when the gateway chose the key because the client sent none. */
  generated: number;
  refundId: string | null;
  createdAtMs: number;
  /** Only once `answered`: an attempt whose refund no client has been given yet never expires. */
  expiresAtMs: number;
  /** 1 once a client has been given the refund made under the key. */
  answered: number;
  /** The last time the request was sent to the provider under the key. */
  sentAtMs: number;
}

/** The key the gateway generated for a refund request that came without one, so a retry reuses it. */
export interface RefundGeneratedKeysTable {
  fingerprint: string;
  idempotencyKey: string;
  expiresAtMs: number;
}

/** Every accepted webhook delivery, once per source and event id. */
export interface WebhookEventsTable {
  source: string;
  eventId: string;
  type: string;
  /** The body as received (JSON). */
  body: string;
  receivedAtMs: number;
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
  /** 0004: the keyed digest of the login's full name as the bank gave it (src/identity/holder-name-digest.ts); null: none given. */
  holderDigest: string | null;
  /** 0004: the newer grant of the same login that replaced this one; null while it is the login's latest. */
  replacedBy: string | null;
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
  /** When the session was last used (0006_sessions), refreshed at most every SessionStore.touchEveryMs. */
  lastUsedAtMs: number;
}

/** A sign-in between /auth/login and /auth/callback; `bindingHash` ties it to the browser or app that started it. */
export interface LoginStatesTable {
  /** SHA-256 of the state (base64url): the state itself is never stored. */
  state: string;
  bindingHash: string;
  /** The PKCE verifier, encrypted with the token cipher (the state's hash as associated data). */
  codeVerifier: string;
  returnTo: string | null;
  responseMode: 'cookie' | 'json';
  /** The user the new connection joins (signed in already, or the app's user); null: bank identity decides. */
  userId: string | null;
  /** The redirect_uri sent to the bank (0010_login_origin; null in older rows: PUBLIC_URL's callback). */
  redirectUri: string | null;
  /** The origin the sign-in was started at (scheme of PUBLIC_URL, the Host header); null when unknown. */
  startedAt: string | null;
  expiresAtMs: number;
}
