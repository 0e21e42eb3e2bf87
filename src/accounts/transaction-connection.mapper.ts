import type { ProviderList } from '../platform/provider/provider-list';
import type { ProviderTransaction } from '../platform/provider/provider-types';
import { BadUserInputError } from '../platform/errors/gateway-errors';
import { TransactionConnection } from './transaction-connection.type';
import { toTransaction } from './transaction.mapper';
import type { TransactionsArgs } from './transactions.args';
import type { TransactionHolder } from './transaction.type';

/** The largest page a client may ask for; larger pages are refused, not silently shortened. */
export const MAX_PAGE_SIZE = 100;

/**
 * A Relay connection over the provider's full list for the date range (the provider does not paginate).
 * A cursor names a transaction id, so it stays valid however the list grows at the top.
 */
export function toTransactionConnection(
  list: ProviderList<ProviderTransaction>,
  holder: TransactionHolder,
  first: number | null | undefined,
  after: string | null | undefined,
): TransactionConnection {
  const size = pageSize(first);
  let start = 0;
  if (after !== null && after !== undefined) {
    const afterId = cursorTransactionId(after);
    const index = list.findIndex((transaction) => transaction.transaction_id === afterId);
    if (index < 0) {
      throw new BadUserInputError(
        'after is not a cursor of this list (cursors come from edges.cursor or pageInfo.endCursor of the same field and date range)',
        'after',
      );
    }
    start = index + 1;
  }
  const page = list.slice(start, start + size);
  const edges = page.map((transaction) => ({ cursor: encodeCursor(transaction.transaction_id), node: toTransaction(transaction, holder) }));
  return Object.assign(new TransactionConnection(), {
    edges,
    nodes: edges.map((edge) => edge.node),
    pageInfo: {
      hasNextPage: start + size < list.length,
      hasPreviousPage: start > 0,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    totalCount: list.length,
  });
}

/** A page size and cursor that could never answer are refused before any provider call, so they cost nothing upstream. */
export function checkTransactionsArgs(args: Pick<TransactionsArgs, 'first' | 'after'>): void {
  pageSize(args.first);
  if (args.after !== null && args.after !== undefined) cursorTransactionId(args.after);
}

function pageSize(first: number | null | undefined): number {
  const size = first ?? 50;
  if (!Number.isInteger(size) || size < 0 || size > MAX_PAGE_SIZE) {
    throw new BadUserInputError(`first must be an integer from 0 to ${MAX_PAGE_SIZE}; got ${String(first)}`, 'first');
  }
  return size;
}

const CURSOR_PREFIX = 'tx:';

export function encodeCursor(transactionId: string): string {
  return Buffer.from(CURSOR_PREFIX + transactionId).toString('base64url');
}

/** The transaction id a cursor names; a malformed cursor is refused here, before any provider call. */
function cursorTransactionId(cursor: string): string {
  const decoded = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  if (!decoded.startsWith(CURSOR_PREFIX)) {
    throw new BadUserInputError('after is not a valid cursor; pass an edges.cursor or pageInfo.endCursor value unchanged', 'after');
  }
  return decoded.slice(CURSOR_PREFIX.length);
}
