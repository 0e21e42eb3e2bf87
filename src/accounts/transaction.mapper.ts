import type { ProviderTransaction } from '../platform/provider/provider-types';
import type { HolderRef } from './account.service';
import type { Account } from './account.type';
import { Card } from './card.type';
import { Transaction, type TransactionHolder } from './transaction.type';

export function toTransaction(source: ProviderTransaction, holder: TransactionHolder): Transaction {
  const meta = source.meta as Record<string, unknown> | undefined;
  return Object.assign(new Transaction(), {
    holder,
    transactionId: source.transaction_id,
    normalisedProviderTransactionId: source.normalised_provider_transaction_id ?? null,
    providerTransactionId: source.provider_transaction_id ?? null,
    timestamp: source.timestamp,
    description: source.description,
    amount: { amount: source.amount, currency: source.currency },
    type: source.transaction_type,
    category: source.transaction_category,
    classification: source.transaction_classification ?? [],
    merchantName: source.merchant_name ?? null,
    runningBalance: source.running_balance ? { amount: source.running_balance.amount, currency: source.running_balance.currency } : null,
    meta: meta
      ? {
          bankTransactionId: stringOrNull(meta.bank_transaction_id),
          providerTransactionCategory: stringOrNull(meta.provider_transaction_category),
          cardNumber: stringOrNull(meta.cardNumber),
          location: stringOrNull(meta.location),
          raw: meta,
        }
      : null,
  });
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** What the account reads need of an account or card: the provider's id and the connection that shows it. */
export function holderRef(holder: Account | Card): HolderRef {
  return { id: holder instanceof Card ? holder.cardId : holder.accountId, connectionId: holder.connectionId };
}
