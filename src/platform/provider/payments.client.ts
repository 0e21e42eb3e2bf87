import type { CallOptions, ProviderHttpClient } from './http.client';
import { callOptionsOf, providerUrl } from './http.client';
import type { ProviderRefund, ProviderRefundRequest } from './provider-types';
import type { ClientCredentialsTokenManager } from './token-manager';

export interface PaymentsClientConfig {
  paymentsUrl: string;
}

const SIGNATURE_HEADER = 'Svc-Signature';

/** Refunds, with the `payments` client-credentials token; every call is signed (Svc-Signature). */
export class PaymentsClient {
  constructor(
    private readonly http: ProviderHttpClient,
    private readonly config: PaymentsClientConfig,
    private readonly tokens: ClientCredentialsTokenManager,
  ) {}

  /**
   * 202 `{ id }`. The Idempotency-Key is signed, so it cannot be swapped in transit, and makes the POST safe to
   * resend: the provider answers the same refund id for the same key and body.
   */
  async createRefund(paymentId: string, refund: ProviderRefundRequest, idempotencyKey: string, options: CallOptions = {}): Promise<{ id: string }> {
    const response = await this.http.send<{ id: string }>({
      route: 'payments.createRefund',
      method: 'POST',
      url: this.refundsUrl(paymentId),
      json: refund,
      headers: { 'Idempotency-Key': idempotencyKey },
      idempotent: true,
      auth: this.tokens.authFor('payments'),
      sign: { header: SIGNATURE_HEADER, signedHeaders: ['Idempotency-Key'] },
      errorContext: { resource: 'payment', fields: { amount_in_minor: 'input.amountInMinor', reference: 'input.reference' } },
      ...callOptionsOf(options),
    });
    return response.body;
  }

  async getRefund(paymentId: string, refundId: string, options: CallOptions = {}): Promise<ProviderRefund> {
    const response = await this.http.send<ProviderRefund>({
      route: 'payments.getRefund',
      method: 'GET',
      url: this.refundsUrl(paymentId, refundId),
      auth: this.tokens.authFor('payments'),
      sign: { header: SIGNATURE_HEADER },
      errorContext: { resource: 'payment or refund' },
      ...callOptionsOf(options),
    });
    return response.body;
  }

  /** All refunds of the payment, oldest first (the provider does not paginate). */
  async listRefunds(paymentId: string, options: CallOptions = {}): Promise<ProviderRefund[]> {
    const response = await this.http.send<{ items: ProviderRefund[] }>({
      route: 'payments.listRefunds',
      method: 'GET',
      url: this.refundsUrl(paymentId),
      auth: this.tokens.authFor('payments'),
      sign: { header: SIGNATURE_HEADER },
      errorContext: { resource: 'payment' },
      ...callOptionsOf(options),
    });
    return response.body.items;
  }

  private refundsUrl(paymentId: string, refundId?: string): string {
    const tail = refundId === undefined ? '' : `/${encodeURIComponent(refundId)}`;
    return providerUrl(this.config.paymentsUrl, `/v3/payments/${encodeURIComponent(paymentId)}/refunds${tail}`);
  }
}
