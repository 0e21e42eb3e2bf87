import { useEffect, useMemo, useState } from 'react';
import { ApolloProvider } from '@apollo/client/react';
import { createApolloClient, type Auth } from './client';
import { GATEWAY_URL } from './config';
import { finishBankSignIn } from './bank-sign-in';
import { Session } from './Session';
import { Refunds } from './Refunds';

/** One Apollo Client per way of signing in: switching to a pasted token starts a fresh cache and WebSocket. */
export function App() {
  const [auth, setAuth] = useState<Auth>({ kind: 'cookie' });
  const [signInError, setSignInError] = useState<string>();
  useEffect(() => {
    finishBankSignIn().then(
      (token) => token && setAuth({ kind: 'bearer', token }),
      (error: Error) => setSignInError(error.message),
    );
  }, []);
  const { client, close } = useMemo(() => createApolloClient(GATEWAY_URL, auth), [auth]);
  useEffect(() => close, [close]);
  return (
    <main>
      <h1>bankgraph web example</h1>
      <p>
        Gateway: <code>{GATEWAY_URL}</code>
      </p>
      {signInError && (
        <p role="alert" className="alert">
          {signInError}
        </p>
      )}
      <ApolloProvider client={client}>
        <Session auth={auth} onAuth={setAuth} />
      </ApolloProvider>
      <Refunds />
    </main>
  );
}
