/** Per request: the provider access token the client sent, passed straight through (no sessions, no refresh). */
export interface NaiveContext {
  accessToken: string | undefined;
  dataUrl: string;
}
