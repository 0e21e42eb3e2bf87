import type { BearerAuth, CallOptions, ProviderHttpClient } from './http.client';
import { callOptionsOf, providerUrl } from './http.client';
import type { ProviderVerificationResult } from './provider-types';

export interface VerificationClientConfig {
  verificationUrl: string;
}

/** Account-holder name checks, with the end user's token (scopes info and accounts). */
export class VerificationClient {
  constructor(
    private readonly http: ProviderHttpClient,
    private readonly config: VerificationClientConfig,
  ) {}

  /** Not retried: a POST without an idempotency key (DESIGN, data-flow rules). */
  async verify(user: BearerAuth, name: string, options: CallOptions = {}): Promise<ProviderVerificationResult> {
    const response = await this.http.send<ProviderVerificationResult>({
      route: 'verification.verify',
      method: 'POST',
      url: providerUrl(this.config.verificationUrl, '/v1/verification'),
      json: { name },
      auth: user,
      errorContext: { fields: { name: 'name' } },
      ...callOptionsOf(options),
    });
    return response.body;
  }
}
