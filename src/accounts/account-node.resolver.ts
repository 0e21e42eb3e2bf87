import { USER_TAG } from '../identity';
import type { OperationContext } from '../platform/graphql/operation-context';
import type { NodeType } from '../platform/graphql/node/node.registry';
import type { AccountGraphService, AccountReads } from './account.service';
import { toAccount } from './account.mapper';
import { ACCOUNT_TAG, type Account } from './account.type';
import { toCard } from './card.mapper';
import { CARD_TAG, type Card } from './card.type';
import type { FromEveryConnection } from './every-connection';
import { holderRef, toTransaction } from './transaction.mapper';
import { transactionList, transactionListKind } from './transaction-list';
import { TRANSACTION_TAG } from './transaction.type';
import { accountReads } from './viewer.resolver';
import { Viewer } from './viewer.type';

type Keys = readonly (readonly string[])[];

/**
 * node(id:) for the account graph. Only the signed-in user's own objects answer, read through the same per-operation
 * reads as viewer.account, viewer.card and their transactions, so a node costs what those fields would: every key
 * of a batch shares one read of each list. Anyone else (a merchant key, another user) gets null with no call.
 */
export function accountNodeTypes(accountGraph: AccountGraphService): NodeType[] {
  const readsOf = (context: OperationContext): AccountReads | undefined =>
    context.principal.kind === 'user' ? accountReads(context, accountGraph) : undefined;
  return [
    {
      tag: USER_TAG,
      arity: 1,
      load: (keys: Keys, context: OperationContext) => {
        const { principal } = context;
        return Promise.resolve(keys.map(([userId]) => (principal.kind === 'user' && principal.userId === userId ? new Viewer() : null)));
      },
    },
    {
      tag: ACCOUNT_TAG,
      arity: 1,
      async load(keys: Keys, context: OperationContext) {
        const reads = readsOf(context);
        if (!reads) return keys.map(() => null);
        const accounts = listed(await reads.accounts(), ({ account, connectionId }) => toAccount(account, connectionId));
        return keys.map(([id]) => accounts.find(id, (account) => account.accountId));
      },
    },
    {
      tag: CARD_TAG,
      arity: 1,
      async load(keys: Keys, context: OperationContext) {
        const reads = readsOf(context);
        if (!reads) return keys.map(() => null);
        const cards = listed(await reads.cards(), ({ card, connectionId }) => toCard(card, connectionId));
        return keys.map(([id]) => cards.find(id, (card) => card.cardId));
      },
    },
    {
      tag: TRANSACTION_TAG,
      arity: 3,
      async load(keys: Keys, context: OperationContext) {
        const reads = readsOf(context);
        if (!reads) return keys.map(() => null);
        return Promise.all(keys.map(([list, holderId, id]) => transactionNode(reads, list!, holderId!, id!)));
      },
    },
  ];
}

/**
 * A transaction read as its account's or card's own field lists it: the holder is found among the user's accounts
 * or cards (so another user's never is), then its list (the default range, as `transactions` with no arguments) is
 * read once per operation, however many of its transactions are asked for.
 */
async function transactionNode(reads: AccountReads, code: string, holderId: string, id: string): Promise<object | null | Error> {
  const list = transactionListKind(code);
  if (list === undefined) return null;
  const kind = list.holder;
  const holders =
    kind === 'account'
      ? listed(await reads.accounts(), ({ account, connectionId }) => toAccount(account, connectionId))
      : listed(await reads.cards(), ({ card, connectionId }) => toCard(card, connectionId));
  const holder = (holders as Listed<Account | Card>).find(holderId, (item) => ('accountId' in item ? item.accountId : item.cardId));
  if (holder === null || holder instanceof Error) return holder;
  const transactions = list.pending ? await reads.pendingTransactions(kind, holderRef(holder)) : await reads.transactions(kind, holderRef(holder), {});
  const found = transactions.find((transaction) => transaction.transaction_id === id);
  return found ? toTransaction(found, { list: transactionList(kind, list.pending), holderId }) : null;
}

interface Listed<T> {
  /** The item with this id; when none is found and a bank failed, that bank's error (it may have held it). */
  find(id: string | undefined, idOf: (item: T) => string): T | null | Error;
}

function listed<R, T>(read: FromEveryConnection<R>, map: (record: R) => T): Listed<T> {
  const items = read.items.map(map);
  return {
    find(id, idOf) {
      const found = items.find((item) => idOf(item) === id);
      if (found) return found;
      const failure = read.failures[0]?.error;
      return failure === undefined ? null : failure instanceof Error ? failure : new Error(String(failure));
    },
  };
}
