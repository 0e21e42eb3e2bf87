import { createHash } from 'node:crypto';
import type { ProviderAccount } from '../datasources/provider-types';

/**
 * The provider gives no user id, so a bank user is identified by the accounts the bank lets them see:
 * the same login yields the same id in every session, which is what keeps beneficiaries and payouts theirs.
 */
export function userIdFromAccounts(accounts: readonly ProviderAccount[]): string {
  const keys = accounts.map((account) => `${account.provider.provider_id}:${account.account_id}`).sort();
  return `user_${createHash('sha256').update(keys.join('\n')).digest('base64url').slice(0, 22)}`;
}
