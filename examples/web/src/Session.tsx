import { useApolloClient, useQuery } from '@apollo/client/react';
import { ACCOUNTS } from './operations';
import type { Auth } from './client';
import { describeError, errorCode } from './errors';
import { SignIn } from './SignIn';
import { Accounts } from './Accounts';
import { Payout } from './Payout';
import { DataTask } from './DataTask';
import { GATEWAY_URL } from './config';

/** Signed in or not is whatever the gateway says of `viewer`: there is no client-side session state to go stale. */
export function Session({ auth, onAuth }: { auth: Auth; onAuth(auth: Auth): void }) {
  const { data, error, loading } = useQuery(ACCOUNTS);
  const client = useApolloClient();

  async function signOut() {
    if (auth.kind === 'bearer') onAuth({ kind: 'cookie' });
    else {
      await fetch(`${GATEWAY_URL}/auth/logout`, { method: 'POST', credentials: 'include' });
      await client.resetStore();
    }
  }

  if (loading) return <p>Loading…</p>;
  if (errorCode(error) === 'UNAUTHENTICATED') return <SignIn onToken={(token) => onAuth({ kind: 'bearer', token })} />;
  if (error || !data) {
    return (
      <section>
        <h2>Your accounts</h2>
        <p role="alert" className="alert">
          {describeError(error)}
        </p>
      </section>
    );
  }
  return (
    <>
      <p>
        Signed in {auth.kind === 'bearer' ? 'with a bearer token' : 'with the session cookie'}. <button onClick={() => void signOut()}>Sign out</button>
      </p>
      <Accounts accounts={data.viewer.accounts} />
      <Payout />
      <DataTask />
    </>
  );
}
