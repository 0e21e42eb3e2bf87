import type { GatewayContext } from '../platform/graphql/operation-context';
import { BadUserInputError } from '../platform/errors/gateway-errors';
import { cursorTransactionId, pageSize, toTransactionConnection } from './transaction-connection.mapper';
import { toTransaction } from './transaction.mapper';
import type { TransactionConnection } from './transaction-connection.type';
import type { Transaction } from './transaction.type';
import type { TransactionsArgs } from './transactions.args';

type Owner = 'account' | 'card';

/** Shared by Account and Card: the provider serves both lists the same way under different paths, per connection. */
export async function transactionConnection(
  context: GatewayContext,
  owner: Owner,
  source: { id: string; connectionId: string },
  args: TransactionsArgs,
): Promise<TransactionConnection> {
  pageSize(args.first);
  if (args.after !== null && args.after !== undefined) cursorTransactionId(args.after);
  const from = args.from ?? undefined;
  const to = args.to ?? undefined;
  if (from !== undefined && to !== undefined && from > to) {
    throw new BadUserInputError(`from must not be after to; got from ${from} and to ${to}`, 'from');
  }
  const resource = owner === 'account' ? 'accountTransactions' : 'cardTransactions';
  const list = await context.loadersFor(source.connectionId).load({ resource, id: source.id, from, to });
  return toTransactionConnection(list, args.first, args.after);
}

export async function pendingTransactions(context: GatewayContext, owner: Owner, source: { id: string; connectionId: string }): Promise<Transaction[]> {
  const resource = owner === 'account' ? 'accountPendingTransactions' : 'cardPendingTransactions';
  return (await context.loadersFor(source.connectionId).load({ resource, id: source.id })).map(toTransaction);
}
