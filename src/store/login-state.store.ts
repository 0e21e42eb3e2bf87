import type { Database } from '../db/database';

/** What the gateway must remember between sending a user to the bank and the bank sending them back. */
export interface LoginState {
  codeVerifier: string;
  /** SHA-256 of the binding value held by the browser (cookie) or app (Login-Binding header) that started it. */
  bindingHash: string;
  /** Where the browser goes after sign-in; only same-origin paths are accepted at /auth/login. */
  returnTo?: string;
  /** `json` for apps (`/auth/login?response=json`): the callback answers `{ sessionToken, expiresAt }`. */
  responseMode: 'cookie' | 'json';
  /** The user the new bank connection joins; undefined lets the bank sign-in decide (bank identity). */
  userId?: string;
}

/** Ten minutes is ample for a bank sign-in, and short enough that a stolen state is useless later. */
export const LOGIN_STATE_TTL_MS = 10 * 60 * 1000;

export class LoginStateStore {
  constructor(private readonly database: Database) {}

  async put(state: string, value: LoginState, now = Date.now()): Promise<void> {
    // Expired ones go here, so the table holds at most ten minutes of sign-ins.
    await this.database.db.deleteFrom('loginStates').where('expiresAtMs', '<=', now).execute();
    await this.database.db
      .insertInto('loginStates')
      .values({
        state,
        bindingHash: value.bindingHash,
        codeVerifier: value.codeVerifier,
        returnTo: value.returnTo ?? null,
        responseMode: value.responseMode,
        userId: value.userId ?? null,
        expiresAtMs: now + LOGIN_STATE_TTL_MS,
      })
      .execute();
  }

  /** One-time: a state is consumed when read (the delete decides who got it), so a replayed callback is refused. */
  async take(state: string, now = Date.now()): Promise<LoginState | undefined> {
    const row = await this.database.db.deleteFrom('loginStates').where('state', '=', state).returningAll().executeTakeFirst();
    if (!row || row.expiresAtMs <= now) return undefined;
    return {
      codeVerifier: row.codeVerifier,
      bindingHash: row.bindingHash,
      returnTo: row.returnTo ?? undefined,
      responseMode: row.responseMode,
      userId: row.userId ?? undefined,
    };
  }
}
