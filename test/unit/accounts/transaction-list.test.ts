import { transactionList, transactionListKind } from '../../../src/accounts/transaction-list';

describe('transaction list codes', () => {
  it('are the codes the global ids clients hold carry', () => {
    expect(transactionList('account', false)).toBe('a');
    expect(transactionList('account', true)).toBe('ap');
    expect(transactionList('card', false)).toBe('c');
    expect(transactionList('card', true)).toBe('cp');
  });

  it('read back as the list they name', () => {
    expect(transactionListKind('a')).toEqual({ holder: 'account', pending: false });
    expect(transactionListKind('ap')).toEqual({ holder: 'account', pending: true });
    expect(transactionListKind('c')).toEqual({ holder: 'card', pending: false });
    expect(transactionListKind('cp')).toEqual({ holder: 'card', pending: true });
  });

  it('name no list for any other code', () => {
    for (const code of ['', 'p', 'ac', 'A', 'app', 'x']) expect(transactionListKind(code)).toBeUndefined();
  });
});
