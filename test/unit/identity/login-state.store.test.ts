import { randomBytes } from 'node:crypto';
import { openDatabase, type Database } from '../../../src/platform/db/database';
import { TokenCipher } from '../../../src/identity/token-cipher';
import { LoginStateStore } from '../../../src/identity/login-state.store';
import { storeBackends } from '../../helpers/store-backends';

const BACKENDS = storeBackends('login_state');

describe.each(BACKENDS)('LoginStateStore on $name', (backend) => {
  let database: Database;
  let cleanUp: () => Promise<void>;
  let store: LoginStateStore;

  beforeEach(async () => {
    const opened = await backend.open();
    cleanUp = opened.cleanUp;
    database = await openDatabase(opened.url);
    store = new LoginStateStore(database, new TokenCipher(randomBytes(32)));
  });
  afterEach(async () => {
    await database.close();
    await cleanUp();
  });

  it('stores neither the state nor the PKCE verifier in clear, and gives the verifier back once for the state', async () => {
    const state = randomBytes(24).toString('base64url');
    const codeVerifier = randomBytes(48).toString('base64url');
    await store.put(state, { codeVerifier, bindingHash: 'binding-hash', returnTo: '/graphql', responseMode: 'cookie' });

    const rows = await database.db.selectFrom('loginStates').selectAll().execute();
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(state);
    expect(stored).not.toContain(codeVerifier);

    expect(await store.take(`${state}x`)).toBeUndefined();
    expect(await store.take(state)).toEqual({ codeVerifier, bindingHash: 'binding-hash', returnTo: '/graphql', responseMode: 'cookie', userId: undefined });
    expect(await store.take(state)).toBeUndefined();
  });

  it('keeps the redirect_uri sent to the bank and the origin the sign-in was started at, for the callback', async () => {
    const state = randomBytes(24).toString('base64url');
    const started = { redirectUri: 'http://127.0.0.1:4000/auth/callback', startedAt: 'http://127.0.0.1:4000' };
    await store.put(state, { codeVerifier: 'verifier-0123456789', bindingHash: 'b', responseMode: 'cookie', ...started });
    expect(await store.take(state)).toMatchObject(started);
  });

  it('refuses a verifier copied onto another sign-in’s row', async () => {
    await store.put('state-one-0123456789', { codeVerifier: 'verifier-one-0123456789', bindingHash: 'b1', responseMode: 'json' });
    await store.put('state-two-0123456789', { codeVerifier: 'verifier-two-0123456789', bindingHash: 'b2', responseMode: 'json' });
    const rows = await database.db.selectFrom('loginStates').select(['state', 'codeVerifier']).execute();
    // Swap the two encrypted verifiers: each is bound to its own row's key.
    await database.db.updateTable('loginStates').set({ codeVerifier: rows[1]!.codeVerifier }).where('state', '=', rows[0]!.state).execute();
    await expect(async () => {
      await store.take('state-one-0123456789');
      await store.take('state-two-0123456789');
    }).rejects.toThrow();
  });
});
