import { createHash } from 'node:crypto';
import type { Database } from '../platform/db/database';
import type { TokenCipher } from './token-cipher';

/** What the gateway must remember between sending a user to the bank and the bank sending them back. */
export interface LoginState {
  codeVerifier: string;
  /** SHA-256 of the binding value held by the browser (cookie) or app (Login-Binding header) that started it. */
  bindingHash: string;
  /** Where the browser goes after sign-in: a path on the gateway, or a URL on an app's origin in CORS_ORIGINS. */
  returnTo?: string;
  /** `json` for apps (`/auth/login?response=json`): the callback answers `{ sessionToken, expiresAt }`. */
  responseMode: 'cookie' | 'json';
  /** The user the new bank connection joins; undefined lets the bank sign-in decide (bank identity). */
  userId?: string;
  /** The redirect_uri sent to the bank, which the code exchange repeats; undefined (an older row): PUBLIC_URL's. */
  redirectUri?: string;
  /** The origin the sign-in was started at, to say so when the callback comes back to another; undefined: unknown. */
  startedAt?: string;
}

/** Ten minutes is ample for a bank sign-in, and short enough that a stolen state is useless later. */
export const LOGIN_STATE_TTL_MS = 10 * 60 * 1000;

/**
 * Sign-ins in progress. A copied database or backup must not let anyone finish one: the row is keyed by the
 * state's SHA-256 (the callback brings the state, so the key is found again; the row does not give it away), and
 * the PKCE verifier is encrypted with the token cipher, bound to that key so it cannot be moved to another row.
 */
export class LoginStateStore {
  constructor(
    private readonly database: Database,
    private readonly cipher: TokenCipher,
    private readonly now: () => number = Date.now,
  ) {}

  async put(state: string, value: LoginState, now = this.now()): Promise<void> {
    // Expired ones go here, so the table holds at most ten minutes of sign-ins.
    await this.database.db.deleteFrom('loginStates').where('expiresAtMs', '<=', now).execute();
    const key = stateKey(state);
    await this.database.db
      .insertInto('loginStates')
      .values({
        state: key,
        bindingHash: value.bindingHash,
        codeVerifier: this.cipher.encrypt(value.codeVerifier, key),
        returnTo: value.returnTo ?? null,
        responseMode: value.responseMode,
        userId: value.userId ?? null,
        redirectUri: value.redirectUri ?? null,
        startedAt: value.startedAt ?? null,
        expiresAtMs: now + LOGIN_STATE_TTL_MS,
      })
      .execute();
  }

  /**
   * Where a sign-in in progress returns to, without consuming it: the bank's redirect of an app's JSON sign-in is
   * handed on to the app, which then finishes the sign-in with its binding.
   */
  async peek(state: string, now = this.now()): Promise<Pick<LoginState, 'returnTo' | 'responseMode'> | undefined> {
    const row = await this.database.db
      .selectFrom('loginStates')
      .select(['returnTo', 'responseMode', 'expiresAtMs'])
      .where('state', '=', stateKey(state))
      .executeTakeFirst();
    if (!row || row.expiresAtMs <= now) return undefined;
    return { returnTo: row.returnTo ?? undefined, responseMode: row.responseMode };
  }

  /** One-time: a state is consumed when read (the delete decides who got it), so a replayed callback is refused. */
  async take(state: string, now = this.now()): Promise<LoginState | undefined> {
    const key = stateKey(state);
    const row = await this.database.db.deleteFrom('loginStates').where('state', '=', key).returningAll().executeTakeFirst();
    if (!row || row.expiresAtMs <= now) return undefined;
    return {
      codeVerifier: this.cipher.decrypt(row.codeVerifier, key),
      bindingHash: row.bindingHash,
      returnTo: row.returnTo ?? undefined,
      responseMode: row.responseMode,
      userId: row.userId ?? undefined,
      redirectUri: row.redirectUri ?? undefined,
      startedAt: row.startedAt ?? undefined,
    };
  }
}

function stateKey(state: string): string {
  return createHash('sha256').update(state, 'utf8').digest('base64url');
}
