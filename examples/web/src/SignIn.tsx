import { useState, type FormEvent } from 'react';
import { appAddress, GATEWAY_URL } from './config';
import { startBankSignIn } from './bank-sign-in';

// #region sign-in
/**
 * The bank's sign-in in the browser: the gateway sends the person to their bank and back to this page with its
 * session cookie (the app and the gateway on the same site). An app on another site holds a token instead: the
 * JSON sign-in's, or one pasted in.
 */
export function SignIn({ onToken }: { onToken(token: string): void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string>();
  const login = `${GATEWAY_URL}/auth/login?returnTo=${encodeURIComponent(appAddress())}`;

  function submitToken(event: FormEvent) {
    event.preventDefault();
    if (token.trim() !== '') onToken(token.trim());
  }

  return (
    <section>
      <h2>Sign in</h2>
      <p>You are not signed in.</p>
      <p>
        <a href={login}>Sign in with the bank</a>
      </p>
      <p>
        <button onClick={() => startBankSignIn().catch((failure: Error) => setError(failure.message))}>Sign in with the bank, keep a token</button>
      </p>
      {error && (
        <p role="alert" className="alert">
          The sign-in could not start: {error}
        </p>
      )}
      <form onSubmit={submitToken}>
        <label>
          Or a session token (sent as <code>Authorization: Bearer</code>, kept in memory only)
          <input type="password" value={token} onChange={(event) => setToken(event.target.value)} aria-label="Session token" />
        </label>
        <button type="submit">Use token</button>
      </form>
    </section>
  );
}
// #endregion sign-in
