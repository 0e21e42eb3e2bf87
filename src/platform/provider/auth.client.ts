/*
 * The provider's token endpoint. Client authentication is client_id + client_secret in the form body (docs/provider-choices.md),
 * so every call lists the secret, and the grant's own secrets, as values no error message may contain.
 * None of these POSTs is retried: an authorization code is one-time and a refresh token rotates, so a resend
 * after a lost answer would fail with invalid_grant even though the first send worked (and the data-flow rule
 * retries no POST without an idempotency key, which client_credentials lacks too).
 */
import type { CallOptions, ProviderHttpClient } from './http.client';
import { callOptionsOf, providerUrl } from './http.client';
import type { ProviderScope, ProviderTokenResponse } from './provider-types';

export interface AuthClientConfig {
  authUrl: string;
  clientId: string;
  clientSecret: string;
}

export interface CodeExchange {
  code: string;
  redirectUri: string;
  /** The PKCE verifier, when the authorize step sent a code_challenge. */
  codeVerifier?: string;
}

export class AuthClient {
  constructor(
    private readonly http: ProviderHttpClient,
    private readonly config: AuthClientConfig,
  ) {}

  /** authorization_code grant; an invalid, expired or reused code is UNAUTHENTICATED (sign in again). */
  exchangeCode(exchange: CodeExchange, options: CallOptions = {}): Promise<ProviderTokenResponse> {
    return this.grant(
      'auth.exchangeCode',
      { grant_type: 'authorization_code', code: exchange.code, redirect_uri: exchange.redirectUri, code_verifier: exchange.codeVerifier },
      [exchange.code, exchange.codeVerifier],
      options,
    );
  }

  /** refresh_token grant; the answer carries a new refresh token and the old one is dead. invalid_grant: UNAUTHENTICATED. */
  refresh(refreshToken: string, options: CallOptions = {}): Promise<ProviderTokenResponse> {
    return this.grant('auth.refresh', { grant_type: 'refresh_token', refresh_token: refreshToken }, [refreshToken], options);
  }

  clientCredentials(scope: ProviderScope | readonly ProviderScope[], options: CallOptions = {}): Promise<ProviderTokenResponse> {
    const scopes = typeof scope === 'string' ? scope : scope.join(' ');
    return this.grant('auth.clientCredentials', { grant_type: 'client_credentials', scope: scopes }, [], options);
  }

  private async grant(
    route: string,
    fields: Record<string, string | undefined>,
    secrets: readonly (string | undefined)[],
    options: CallOptions,
  ): Promise<ProviderTokenResponse> {
    const response = await this.http.send<ProviderTokenResponse>({
      route,
      method: 'POST',
      url: providerUrl(this.config.authUrl, '/connect/token'),
      form: { ...fields, client_id: this.config.clientId, client_secret: this.config.clientSecret },
      errorContext: {
        tokenEndpoint: true,
        secrets: [this.config.clientSecret, ...secrets.filter((value): value is string => value !== undefined)],
      },
      ...callOptionsOf(options),
    });
    return response.body;
  }
}
