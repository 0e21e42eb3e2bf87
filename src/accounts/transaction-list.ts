import type { Holder } from './account.service';

/**
 * The code of the list a transaction was read from, as its global id carries it; clients hold those ids, so the
 * codes never change.
 */
export const TRANSACTION_LIST_CODES = {
  account: { posted: 'a', pending: 'ap' },
  card: { posted: 'c', pending: 'cp' },
} as const;

export type TransactionList = (typeof TRANSACTION_LIST_CODES)[Holder][keyof (typeof TRANSACTION_LIST_CODES)[Holder]];

/** A list code read back: whose list it is and whether it holds the pending transactions. */
export interface TransactionListKind {
  holder: Holder;
  pending: boolean;
}

export function transactionList(holder: Holder, pending: boolean): TransactionList {
  const codes = TRANSACTION_LIST_CODES[holder];
  return pending ? codes.pending : codes.posted;
}

/** The list a code names; undefined for a code no list has. */
export function transactionListKind(code: string): TransactionListKind | undefined {
  for (const holder of Object.keys(TRANSACTION_LIST_CODES) as Holder[]) {
    const codes = TRANSACTION_LIST_CODES[holder];
    if (code === codes.posted) return { holder, pending: false };
    if (code === codes.pending) return { holder, pending: true };
  }
  return undefined;
}
