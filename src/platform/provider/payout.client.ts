import type { CallOptions, ProviderHttpClient } from './http.client';
import { callOptionsOf, providerUrl } from './http.client';
import type { ProviderWithdrawal, ProviderWithdrawalRequest } from './provider-types';
import type { ClientCredentialsTokenManager } from './token-manager';

export interface PayoutClientConfig {
  payoutUrl: string;
}

/** Withdrawals, with the `paydirect` client-credentials token. */
export class PayoutClient {
  constructor(
    private readonly http: ProviderHttpClient,
    private readonly config: PayoutClientConfig,
    private readonly tokens: ClientCredentialsTokenManager,
  ) {}

  /**
   * Retried like an idempotent request: the provider treats transaction_id as the idempotency key, so resending
   * the same bytes answers the same withdrawal instead of paying twice. Signed with no extra headers covered.
   */
  async createWithdrawal(withdrawal: ProviderWithdrawalRequest, options: CallOptions = {}): Promise<ProviderWithdrawal> {
    const response = await this.http.send<{ result: ProviderWithdrawal }>({
      route: 'payout.createWithdrawal',
      method: 'POST',
      url: providerUrl(this.config.payoutUrl, '/v1/withdrawals'),
      json: withdrawal,
      idempotent: true,
      auth: this.tokens.authFor('paydirect'),
      sign: { header: 'X-SVC-Signature' },
      errorContext: {
        resource: 'withdrawal',
        fields: {
          beneficiary_name: 'input.beneficiaryName',
          beneficiary_iban: 'input.beneficiaryIban',
          beneficiary_reference: 'input.beneficiaryReference',
          amount_in_minor: 'input.amountInMinor',
          currency: 'input.currency',
        },
      },
      ...callOptionsOf(options),
    });
    return response.body.result;
  }

  async getWithdrawal(transactionId: string, options: CallOptions = {}): Promise<ProviderWithdrawal> {
    const response = await this.http.send<{ result: ProviderWithdrawal }>({
      route: 'payout.getWithdrawal',
      method: 'GET',
      url: providerUrl(this.config.payoutUrl, `/v1/withdrawals/${encodeURIComponent(transactionId)}`),
      auth: this.tokens.authFor('paydirect'),
      errorContext: { resource: 'withdrawal' },
      ...callOptionsOf(options),
    });
    return response.body.result;
  }
}
