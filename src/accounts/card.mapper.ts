import type { ProviderCard, ProviderCardBalance } from '../platform/provider/provider-types';
import { Card } from './card.type';
import { CardBalance } from './card-balance.type';

export function toCard(source: ProviderCard, connectionId: string): Card {
  return Object.assign(new Card(), {
    connectionId,
    cardId: source.account_id,
    network: source.card_network,
    type: source.card_type,
    currency: source.currency,
    displayName: source.display_name,
    partialCardNumber: source.partial_card_number,
    nameOnCard: source.name_on_card,
    validFrom: source.valid_from ?? null,
    validTo: source.valid_to ?? null,
    updatedAt: source.update_timestamp,
    provider: { id: source.provider.provider_id },
  });
}

export function toCardBalance(source: ProviderCardBalance): CardBalance {
  return Object.assign(new CardBalance(), {
    currency: source.currency,
    available: source.available,
    current: source.current,
    creditLimit: source.credit_limit ?? null,
    lastStatementBalance: source.last_statement_balance ?? null,
    lastStatementDate: source.last_statement_date ?? null,
    paymentDue: source.payment_due ?? null,
    paymentDueDate: source.payment_due_date ?? null,
    updatedAt: source.update_timestamp,
  });
}
