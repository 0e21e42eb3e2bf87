import type { ProviderAccount, ProviderAccountBalance } from '../platform/provider/provider-types';
import { Account } from './account.type';
import { AccountBalance } from './account-balance.type';

export function toAccount(source: ProviderAccount, connectionId: string): Account {
  return Object.assign(new Account(), {
    connectionId,
    accountId: source.account_id,
    type: source.account_type,
    displayName: source.display_name,
    currency: source.currency,
    accountNumber: {
      iban: source.account_number?.iban ?? null,
      number: source.account_number?.number ?? null,
      sortCode: source.account_number?.sort_code ?? null,
      swiftBic: source.account_number?.swift_bic ?? null,
    },
    provider: { id: source.provider.provider_id },
    updatedAt: source.update_timestamp,
  });
}

export function toAccountBalance(source: ProviderAccountBalance): AccountBalance {
  return Object.assign(new AccountBalance(), {
    currency: source.currency,
    available: source.available,
    current: source.current,
    overdraft: source.overdraft ?? null,
    updatedAt: source.update_timestamp,
  });
}
