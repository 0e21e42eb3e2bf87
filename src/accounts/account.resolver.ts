import { toAccountBalance } from './account.mapper';
import { AccountBalance } from './account-balance.type';
import { Account } from './account.type';
import { holdingFieldsResolver } from './holding-fields.resolver';
import { holderRef } from './transaction.mapper';

export const AccountResolver = holdingFieldsResolver({
  holder: 'account',
  type: Account,
  balanceType: AccountBalance,
  async balance(reads, account) {
    const balance = await reads.accountBalance(holderRef(account));
    return balance ? toAccountBalance(balance) : null;
  },
});
