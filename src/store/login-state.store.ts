import type Keyv from 'keyv';

/** What the gateway must remember between sending a user to the bank and the bank sending them back. */
export interface LoginState {
  codeVerifier: string;
  /** Where the browser goes after sign-in; only same-origin paths are accepted at /auth/login. */
  returnTo?: string;
  /** `json` for apps (`/auth/login?response=json`): the callback answers `{ sessionToken, expiresAt }`. */
  responseMode: 'cookie' | 'json';
  createdAt: string;
}

/** Ten minutes is ample for a bank sign-in, and short enough that a stolen state is useless later. */
export const LOGIN_STATE_TTL_MS = 10 * 60 * 1000;

export class LoginStateStore {
  constructor(private readonly keyv: Keyv<LoginState>) {}

  async put(state: string, value: LoginState): Promise<void> {
    await this.keyv.set(state, value, LOGIN_STATE_TTL_MS);
  }

  /** One-time: a state is consumed when read, so a replayed callback is refused. */
  async take(state: string): Promise<LoginState | undefined> {
    const value = await this.keyv.get(state);
    if (value) await this.keyv.delete(state);
    return value;
  }
}
