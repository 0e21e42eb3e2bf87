import { useQuery } from '@apollo/client/react';
import { TRANSACTIONS, type AccountSummary } from './operations';
import { describeError } from './errors';

const PAGE_SIZE = 5;

export function Accounts({ accounts }: { accounts: AccountSummary[] }) {
  return (
    <section>
      <h2>Your accounts</h2>
      {accounts.map((account) => (
        <article key={account.id} aria-label={account.displayName}>
          <h3>{account.displayName}</h3>
          <p>Balance: {account.balance ? `${account.balance.available} ${account.balance.currency} available` : 'not reported by the bank'}</p>
          <Transactions accountId={account.accountId} />
        </article>
      ))}
    </section>
  );
}

// #region transactions
/** One page of an account's transactions; "More" asks for the next and relayStylePagination appends it. */
function Transactions({ accountId }: { accountId: string }) {
  const { data, error, fetchMore, loading } = useQuery(TRANSACTIONS, { variables: { accountId, first: PAGE_SIZE } });
  if (error) return <p className="alert">{describeError(error)}</p>;
  if (!data) return <p>Loading transactions…</p>;
  const transactions = data.viewer.account?.transactions;
  if (!transactions) return <p>This account is no longer shared.</p>;
  const { endCursor, hasNextPage } = transactions.pageInfo;
  return (
    <>
      <ul aria-label="Transactions">
        {transactions.edges.map(({ node }) => (
          <li key={node.id}>
            {node.timestamp.slice(0, 10)} · {node.description} · {node.amount.amount} {node.amount.currency}
          </li>
        ))}
      </ul>
      {hasNextPage && (
        <button disabled={loading} onClick={() => void fetchMore({ variables: { after: endCursor } })}>
          More
        </button>
      )}
    </>
  );
}
// #endregion transactions
