import type { CallOptions } from '../platform/provider/http.client';
import type { PayoutClient } from '../platform/provider/payout.client';
import type { ProviderWithdrawal, ProviderWithdrawalRequest } from '../platform/provider/provider-types';
import { NotFoundError, UpstreamError } from '../platform/errors/gateway-errors';
import type { ConfirmedPayout, PayoutRequest } from './payout.model';

/** The provider's withdrawals in the payouts' words: the one place their wire shapes are read and written. */
export interface PayoutProvider {
  /** Sends the request; the answer is its payout, or UPSTREAM_ERROR when the body is not a withdrawal under its id. */
  create(request: PayoutRequest, options: CallOptions): Promise<ConfirmedPayout>;
  /** The provider's payout under this id: NOT_FOUND when the provider has none, undefined when it answered something else. */
  read(transactionId: string, options: CallOptions): Promise<ConfirmedPayout | undefined>;
  /** read(), with undefined too when the provider has none. */
  find(transactionId: string, options: CallOptions): Promise<ConfirmedPayout | undefined>;
}

/** The client calls the adapter makes. */
export type WithdrawalCalls = Pick<PayoutClient, 'createWithdrawal' | 'getWithdrawal'>;

export function payoutProvider(client: WithdrawalCalls): PayoutProvider {
  const read = async (transactionId: string, options: CallOptions): Promise<ConfirmedPayout | undefined> =>
    fromWithdrawal(await client.getWithdrawal(transactionId, options), transactionId);
  return {
    read,
    async create(request, options) {
      const answer = await client.createWithdrawal(toWithdrawalRequest(request), options);
      const confirmed = fromWithdrawal(answer, request.transactionId);
      if (!confirmed) {
        throw new UpstreamError(
          'The provider answered the payout with a body the gateway cannot read. Its status is being checked; read the payout again shortly.',
        );
      }
      return confirmed;
    },
    async find(transactionId, options) {
      try {
        return await read(transactionId, options);
      } catch (error) {
        if (error instanceof NotFoundError) return undefined;
        throw error;
      }
    },
  };
}

/** The request as the provider takes it, field for field in the order the gateway has always sent. */
export function toWithdrawalRequest(request: PayoutRequest): ProviderWithdrawalRequest {
  return {
    transaction_id: request.transactionId,
    beneficiary_name: request.beneficiaryName,
    beneficiary_iban: request.beneficiaryIban,
    beneficiary_reference: request.beneficiaryReference,
    currency: request.currency,
    amount_in_minor: request.amountInMinor,
    context_code: request.contextCode,
  };
}

export function fromWithdrawalRequest(request: ProviderWithdrawalRequest): PayoutRequest {
  return {
    transactionId: request.transaction_id,
    beneficiaryName: request.beneficiary_name,
    beneficiaryIban: request.beneficiary_iban,
    beneficiaryReference: request.beneficiary_reference,
    currency: request.currency,
    amountInMinor: request.amount_in_minor,
    contextCode: request.context_code,
  };
}

/** A provider answer as this payout's, only when it is a withdrawal under this id; undefined otherwise. */
export function fromWithdrawal(value: unknown, transactionId: string): ConfirmedPayout | undefined {
  const candidate = value as Partial<ProviderWithdrawal> | null | undefined;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.transaction_id !== 'string' ||
    candidate.transaction_id.toLowerCase() !== transactionId ||
    typeof candidate.status !== 'string'
  ) {
    return undefined;
  }
  const withdrawal = candidate as ProviderWithdrawal;
  return {
    transactionId: withdrawal.transaction_id,
    beneficiaryName: withdrawal.beneficiary_name,
    beneficiaryIban: withdrawal.beneficiary_iban,
    beneficiaryReference: withdrawal.beneficiary_reference,
    currency: withdrawal.currency,
    amountInMinor: withdrawal.amount_in_minor,
    contextCode: withdrawal.context_code,
    status: withdrawal.status,
    authorisedAt: withdrawal.authorised_at ?? null,
    submittedAt: withdrawal.submitted_at ?? null,
    settledAt: withdrawal.settled_at ?? null,
    rejectedAt: withdrawal.rejected_at ?? null,
    failedAt: withdrawal.failed_at ?? null,
  };
}

/** A confirmed payout in the provider's shape, as the ledger's `withdrawal` column has always held it. */
export function toWithdrawal(payout: ConfirmedPayout): ProviderWithdrawal {
  return {
    transaction_id: payout.transactionId,
    authorised_at: payout.authorisedAt,
    submitted_at: payout.submittedAt,
    settled_at: payout.settledAt,
    rejected_at: payout.rejectedAt,
    failed_at: payout.failedAt,
    beneficiary_name: payout.beneficiaryName,
    beneficiary_iban: payout.beneficiaryIban,
    beneficiary_reference: payout.beneficiaryReference,
    amount_in_minor: payout.amountInMinor,
    currency: payout.currency,
    status: payout.status,
    context_code: payout.contextCode,
  };
}

/** The ledger's `request` and `withdrawal` columns hold the provider's shapes as JSON, the bytes a retry resends. */
export const storedPayoutJson = {
  request: (request: PayoutRequest): string => JSON.stringify(toWithdrawalRequest(request)),
  parseRequest: (json: string): PayoutRequest => fromWithdrawalRequest(JSON.parse(json) as ProviderWithdrawalRequest),
  confirmed: (payout: ConfirmedPayout): string => JSON.stringify(toWithdrawal(payout)),
  parseConfirmed: (json: string, transactionId: string): ConfirmedPayout | undefined => fromWithdrawal(JSON.parse(json), transactionId),
};
