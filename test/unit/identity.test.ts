import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkReturnTo } from '../../src/identity/return-to';
import { ConfigError, loadConfig } from '../../src/platform/config/config';
import { openDatabase, type Database } from '../../src/platform/db/database';
import { ConnectionStore, type Grant, type GrantOutcome } from '../../src/identity/connection.store';
import { tokenEncryptionKey } from '../../src/identity/encryption-key';
import { TokenCipher } from '../../src/identity/token-cipher';
import { SessionStore } from '../../src/identity/session.store';
import { earlierNormalisedHolderName, normaliseHolderName } from '../../src/identity/holder-name-digest';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('TokenCipher', () => {
  const cipher = new TokenCipher(randomBytes(32));

  it('round-trips a token, with a fresh IV each time', () => {
    const one = cipher.encrypt('refresh-token-value', 'conn_1');
    const two = cipher.encrypt('refresh-token-value', 'conn_1');
    expect(one).not.toBe(two);
    expect(one).not.toContain('refresh-token-value');
    expect(cipher.decrypt(one, 'conn_1')).toBe('refresh-token-value');
  });

  it('refuses a ciphertext that was altered, moved to another connection, or made with another key', () => {
    const stored = cipher.encrypt('refresh-token-value', 'conn_1');
    const [version, iv, tag, body] = stored.split('.');
    const flipped = Buffer.from(body!, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => cipher.decrypt([version, iv, tag, flipped.toString('base64url')].join('.'), 'conn_1')).toThrow();
    expect(() => cipher.decrypt(stored, 'conn_2')).toThrow();
    expect(() => new TokenCipher(randomBytes(32)).decrypt(stored, 'conn_1')).toThrow();
    expect(() => cipher.decrypt('plain-text-token', 'conn_1')).toThrow('unrecognised token ciphertext');
  });
});

describe('tokenEncryptionKey', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bankgraph-key-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('prefers TOKEN_ENCRYPTION_KEY, else keeps a generated key beside the SQLite store (owner-only) and reuses it', () => {
    const configured = randomBytes(32);
    expect(tokenEncryptionKey(configured, `sqlite://${join(dir, 'gateway.sqlite')}`)).toBe(configured);
    const first = tokenEncryptionKey(undefined, `sqlite://${join(dir, 'gateway.sqlite')}`);
    expect(first).toHaveLength(32);
    const file = join(dir, 'token-encryption.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')).toEqual(first);
    expect(tokenEncryptionKey(undefined, `sqlite://${join(dir, 'gateway.sqlite')}`)).toEqual(first);
  });

  it('refuses a key file that does not hold 32 bytes rather than making a new key', () => {
    writeFileSync(join(dir, 'token-encryption.key'), 'too-short');
    expect(() => tokenEncryptionKey(undefined, `sqlite://${join(dir, 'gateway.sqlite')}`)).toThrow(/does not hold a 32-byte base64 key/);
  });
});

describe('identity configuration', () => {
  it('requires TOKEN_ENCRYPTION_KEY in production and checks its size', () => {
    expect(problemsOf({ NODE_ENV: 'production' })).toContain(
      'TOKEN_ENCRYPTION_KEY is required in production: 32 random bytes, base64 or hex (e.g. openssl rand -base64 32)',
    );
    expect(problemsOf({ TOKEN_ENCRYPTION_KEY: 'c2hvcnQ=' })).toEqual(['TOKEN_ENCRYPTION_KEY must be 32 bytes, base64 (44 characters) or hex (64 characters)']);
    expect(loadConfig({ TOKEN_ENCRYPTION_KEY: 'ab'.repeat(32) }).identity.tokenEncryptionKey).toEqual(Buffer.alloc(32, 0xab));
    expect(
      problemsOf({
        NODE_ENV: 'production',
        PROVIDER: 'sandbox',
        IDENTITY: 'bank',
        MERCHANT_KEYS: 'merchant-key-0123456789-abcdefghij',
        TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        PUBLIC_URL: 'https://gateway.example',
        METRICS_TOKEN: 'metrics-token-0123456789',
      }),
    ).toEqual([]);
  });

  it('runs bank identity in production only when IDENTITY=bank says so; app identity is the default there', () => {
    const production = {
      NODE_ENV: 'production',
      PROVIDER: 'sandbox',
      MERCHANT_KEYS: 'merchant-key-0123456789-abcdefghij',
      TOKEN_ENCRYPTION_KEY: 'ab'.repeat(32),
      PUBLIC_URL: 'https://gateway.example',
      METRICS_TOKEN: 'metrics-token-0123456789',
    };
    expect(problemsOf(production)).toEqual([
      "app identity is the default with NODE_ENV=production: set AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE (your app's OIDC provider), or IDENTITY=bank to sign users in through their bank on purpose",
    ]);
    expect(loadConfig({ ...production, IDENTITY: 'bank' }).identity.app).toBeUndefined();
    const app = { AUTH_JWKS_URL: 'https://idp.example/jwks', AUTH_ISSUER: 'https://idp.example/', AUTH_AUDIENCE: 'api' };
    expect(loadConfig({ ...production, ...app }).identity.app?.issuer).toBe('https://idp.example/');
    // Outside production bank identity stays the default; asked for, app identity needs its three settings.
    expect(loadConfig({}).identity.app).toBeUndefined();
    expect(problemsOf({ IDENTITY: 'app' })).toEqual([
      'app identity needs all of AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE; missing AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE',
    ]);
    expect(problemsOf({ IDENTITY: 'bank', ...app })).toEqual([
      'AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE are only used with IDENTITY=app; IDENTITY=bank signs users in through their bank',
    ]);
    expect(problemsOf({ IDENTITY: 'both' })).toEqual(['IDENTITY must be one of app, bank; got "both"']);
  });

  it('takes app identity as all three of AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE, with an algorithm allow-list that has no none or HMAC', () => {
    expect(loadConfig({}).identity.app).toBeUndefined();
    expect(problemsOf({ AUTH_JWKS_URL: 'https://idp.example/jwks' })).toEqual([
      'app identity needs all of AUTH_JWKS_URL, AUTH_ISSUER, AUTH_AUDIENCE; missing AUTH_ISSUER, AUTH_AUDIENCE',
    ]);
    const full = { AUTH_JWKS_URL: 'https://idp.example/jwks', AUTH_ISSUER: 'https://idp.example/', AUTH_AUDIENCE: 'api' };
    expect(loadConfig(full).identity.app).toEqual({
      jwksUrl: 'https://idp.example/jwks',
      issuer: 'https://idp.example/',
      audience: 'api',
      algorithms: ['RS256', 'ES256'],
      maxTokenAgeSeconds: 86_400,
    });
    for (const algorithms of ['none', 'HS256', 'RS256,none', '']) {
      expect(problemsOf({ ...full, AUTH_ALGORITHMS: algorithms })[0]).toMatch(/^AUTH_ALGORITHMS must be a comma-separated list of RS256/);
    }
    expect(problemsOf({ AUTH_ALGORITHMS: 'RS256' })).toEqual(['AUTH_ALGORITHMS is only used with AUTH_JWKS_URL, AUTH_ISSUER and AUTH_AUDIENCE']);
  });
});

describe('checkReturnTo', () => {
  it.each(['/graphql', '/graphql?tab=1&x=/y', '/a/b/c', '/', `/${'a'.repeat(511)}`])('accepts %j', (path) => {
    expect(checkReturnTo(path)).toBe(path);
  });

  it.each([
    '',
    'graphql',
    '//evil.example',
    '/\\evil.example',
    '\\\\evil',
    '/\t/evil.example',
    '/\n/x',
    '/ x',
    '/\u200b/x',
    '/\u2028',
    '/x\u007f',
    '/caf\u00e9',
    '/\u4f60\u597d',
    `/${'a'.repeat(512)}`,
    'https://evil.example',
  ])('refuses %j', (path) => {
    expect(() => checkReturnTo(path)).toThrow(/^returnTo must be a same-origin path on this gateway/);
  });
});

describe('checkReturnTo with apps in CORS_ORIGINS', () => {
  const apps = new Set(['http://localhost:5173', 'https://app.example.com']);

  it.each([
    ['http://localhost:5173', 'http://localhost:5173/'],
    ['http://localhost:5173/', 'http://localhost:5173/'],
    ['http://localhost:5173/signed-in?tab=1', 'http://localhost:5173/signed-in?tab=1'],
    ['http://localhost:5173#/accounts', 'http://localhost:5173/#/accounts'],
    ['https://app.example.com/a/b', 'https://app.example.com/a/b'],
    ['/graphql', '/graphql'],
  ])('accepts %j as %j', (returnTo, sent) => {
    expect(checkReturnTo(returnTo, apps)).toBe(sent);
  });

  it.each([
    'https://evil.example/',
    'http://localhost:5174/',
    'https://localhost:5173/',
    'http://localhost:5173.evil.example/',
    'http://localhost:5173@evil.example/',
    'http://user:pass@localhost:5173/',
    'HTTP://LOCALHOST:5173/',
    'http://localhost:5173\\@evil.example',
    'http://localhost:5173/\t',
    'http://localhost:5173/ x',
    'http://localhost:5173/caf\u00e9',
    'javascript:alert(1)//http://localhost:5173',
    'data:text/html,x',
    `http://localhost:5173/${'a'.repeat(512)}`,
    '//localhost:5173/',
    '',
  ])('refuses %j', (returnTo) => {
    expect(() => checkReturnTo(returnTo, apps)).toThrow(
      /^returnTo must be a same-origin path on this gateway, such as \/graphql, or an absolute URL on an origin in CORS_ORIGINS: /,
    );
  });
});

describe('normaliseHolderName', () => {
  it.each([
    ['John Doe', 'john doe'],
    ['  JOHN   DOE ', 'john doe'],
    ['Mr. John Doe', 'john doe'],
    ['Dr Mrs Jane Doe', 'jane doe'],
    ['MS. Zoë Ng', 'zoe ng'],
    ["Seán O'Brien", 'sean obrien'],
    ['Lee Ming-Hao', 'lee ming hao'],
    ['Alex Green, Jr.', 'alex green jr'],
    ['Alex Green Sr', 'alex green sr'],
    ['Alex Green III', 'alex green iii'],
    ['Doe, John', 'doe john'],
    ['John Dr Doe', 'john dr doe'],
  ])('%j is compared as %j', (name, normalised) => {
    expect(normaliseHolderName(name)).toBe(normalised);
  });

  it('tells apart what the bank spells differently: suffixes, word order, initials, other letters', () => {
    const distinct = ['Alex Green', 'Alex Green Jr', 'Alex Green Sr', 'Alex Green II', 'Ming Lee', 'Lee Ming', 'J Doe', 'John Doe', 'Jon Doe'];
    expect(new Set(distinct.map(normaliseHolderName)).size).toBe(distinct.length);
  });

  it('gives no name for none, or for nothing but titles and punctuation', () => {
    expect(normaliseHolderName(undefined)).toBeUndefined();
    expect(normaliseHolderName('')).toBeUndefined();
    expect(normaliseHolderName('Mr. Dr.')).toBeUndefined();
    expect(normaliseHolderName(' - ')).toBeUndefined();
  });
});

describe('ConnectionStore and SessionStore', () => {
  let database: Database;
  let connections: ConnectionStore;
  const tokens = { accessToken: 'access', refreshToken: 'refresh', expiresAtMs: Date.now() + 3_600_000 };
  const grant = (overrides: Partial<Grant>): Grant => ({ providerId: 'mock', scopes: 'info accounts', tokens, accountIds: [], cardIds: [], ...overrides });

  beforeEach(async () => {
    database = await openDatabase('sqlite://:memory:');
    connections = new ConnectionStore(database, new TokenCipher(randomBytes(32)));
  });
  afterEach(() => database.close());

  const added = async (outcome: Promise<GrantOutcome>): Promise<{ userId: string; connectionId: string }> => {
    const result = await outcome;
    if (result.kind !== 'added') throw new Error(`expected the grant to be added, it was refused: ${result.reason}`);
    return result;
  };

  it('recognises a login that shows the same or more accounts and cards under the same holder name, at the same bank only', async () => {
    const first = await added(connections.addGrant(grant({ accountIds: ['a1'], cardIds: ['c1'], holderName: 'John Doe' })));
    const again = await added(connections.addGrant(grant({ accountIds: ['a1', 'a2'], cardIds: ['c1'], holderName: 'MR. JOHN  DOE' })));
    expect(again.userId).toBe(first.userId);
    // The newer grant replaced the older one at that bank: one active connection shows the person's accounts.
    expect((await connections.connectionsOf(first.userId)).map((connection) => connection.id)).toEqual([again.connectionId]);
    expect((await added(connections.addGrant(grant({ accountIds: ['a1', 'a2'], cardIds: ['c1'], holderName: 'John Doe' })))).userId).toBe(first.userId);
    // A reissued card does not matter to a login that shows accounts; a card-only login is known by its cards.
    expect((await added(connections.addGrant(grant({ accountIds: ['a1', 'a2'], cardIds: ['c2'], holderName: 'John Doe' })))).userId).toBe(first.userId);
    const cardOnly = await added(connections.addGrant(grant({ cardIds: ['k1'], holderName: 'Cara Jones' })));
    expect((await added(connections.addGrant(grant({ cardIds: ['k1', 'k2'], holderName: 'Cara Jones' })))).userId).toBe(cardOnly.userId);
    expect((await added(connections.addGrant(grant({ cardIds: ['k2'], holderName: 'Cara Jones' })))).userId).not.toBe(cardOnly.userId);
    // Fewer (a closed account, or someone who shares only some of them), another name, no name, another bank: new users.
    expect((await added(connections.addGrant(grant({ cardIds: ['c1'], holderName: 'John Doe' })))).userId).not.toBe(first.userId);
    expect((await added(connections.addGrant(grant({ accountIds: ['a1', 'a2', 'a3'], cardIds: ['c1'], holderName: 'Jane Doe' })))).userId).not.toBe(
      first.userId,
    );
    expect((await added(connections.addGrant(grant({ accountIds: ['a1', 'a2'], cardIds: ['c1'] })))).userId).not.toBe(first.userId);
    expect((await added(connections.addGrant(grant({ providerId: 'mock-north', accountIds: ['a1'], holderName: 'John Doe' })))).userId).not.toBe(first.userId);
  });

  it('keeps apart joint holders whose names differ only by a generational suffix or by word order', async () => {
    for (const [smaller, larger] of [
      ['Alex Green Jr', 'Alex Green Sr'],
      ['Ming Lee', 'Lee Ming'],
      ['Alex Green', 'Alex Green II'],
    ] as const) {
      const joint = `joint-${larger}`;
      // The holder of only the joint account signs in first; the other's grant shows it and an account of their own.
      const son = await added(connections.addGrant(grant({ accountIds: [joint], holderName: smaller })));
      const father = await added(connections.addGrant(grant({ accountIds: [joint, `own-${larger}`], holderName: larger })));
      expect(father.userId).not.toBe(son.userId);
      expect((await connections.connectionsOf(son.userId)).map((connection) => connection.id)).toEqual([son.connectionId]);
      expect((await connections.connectionsOf(father.userId)).map((connection) => connection.id)).toEqual([father.connectionId]);
      // Each is still recognised as themselves, spelt with other case, accents, punctuation or a courtesy title.
      const sonAgain = await added(connections.addGrant(grant({ accountIds: [joint], holderName: `Mr. ${smaller.toUpperCase()}` })));
      expect(sonAgain.userId).toBe(son.userId);
      expect((await added(connections.addGrant(grant({ accountIds: [joint, `own-${larger}`], holderName: ` ${larger}. ` })))).userId).toBe(father.userId);
    }
  });

  it("does not recognise anyone by a digest of the earlier rule, but keeps a revoked user's login refused by it", async () => {
    const cipher = new TokenCipher(randomBytes(32));
    const store = new ConnectionStore(database, cipher);
    const earlierDigest = (name: string): string => cipher.fingerprint(earlierNormalisedHolderName(name)!);
    const son = await added(store.addGrant(grant({ accountIds: ['joint-e'], holderName: 'Alex Green Jr' })));
    const john = await added(store.addGrant(grant({ accountIds: ['j-e'], holderName: 'John Doe' })));
    // As stored before this rule: "Alex Green Jr" and "Alex Green Sr" give one earlier digest.
    await database.db
      .updateTable('bankConnections')
      .set({ holderDigest: earlierDigest('Alex Green Jr') })
      .where('id', '=', son.connectionId)
      .execute();
    await database.db
      .updateTable('bankConnections')
      .set({ holderDigest: earlierDigest('John Doe') })
      .where('id', '=', john.connectionId)
      .execute();
    const father = await added(store.addGrant(grant({ accountIds: ['joint-e', 'own-e'], holderName: 'Alex Green Sr' })));
    expect(father.userId).not.toBe(son.userId);
    expect((await store.connectionsOf(son.userId)).map((connection) => connection.status)).toEqual(['active']);
    // The same person again: a new user once, as for a connection without a name; from then on recognised.
    const johnAgain = await added(store.addGrant(grant({ accountIds: ['j-e'], holderName: 'John Doe' })));
    expect(johnAgain.userId).not.toBe(john.userId);
    expect((await added(store.addGrant(grant({ accountIds: ['j-e'], holderName: 'John Doe' })))).userId).toBe(johnAgain.userId);
    // A revoked user's earlier-rule connection still refuses their login.
    const ann = await added(store.addGrant(grant({ accountIds: ['a-e'], holderName: 'Ann Roe' })));
    await database.db
      .updateTable('bankConnections')
      .set({ holderDigest: earlierDigest('Ann Roe') })
      .where('id', '=', ann.connectionId)
      .execute();
    expect(await store.revokeUser(ann.userId)).toBe(true);
    expect(await store.addGrant(grant({ accountIds: ['a-e'], holderName: 'Ann Roe' }))).toEqual({ kind: 'refused', reason: 'revoked' });
  });

  it("keeps two holders of a joint account apart in either order, and never replaces the other holder's connection", async () => {
    for (const [firstName, firstOwn, secondName, secondOwn] of [
      ['Ada Green', 'ada-own', 'Ben Green', 'ben-own'],
      ['Ben Green', 'ben-own2', 'Ada Green', 'ada-own2'],
    ] as const) {
      const joint = `joint-${firstOwn}`;
      const one = await added(connections.addGrant(grant({ accountIds: [firstOwn, joint], holderName: firstName })));
      // A third holder with only the joint account: all of it is in the first holder's grant, yet it is someone else.
      const other = await added(connections.addGrant(grant({ accountIds: [joint], holderName: 'Cal Green' })));
      const two = await added(connections.addGrant(grant({ accountIds: [joint, secondOwn], holderName: secondName })));
      expect(new Set([one.userId, other.userId, two.userId]).size).toBe(3);
      expect((await connections.connectionsOf(one.userId)).map((connection) => connection.status)).toEqual(['active']);
    }
  });

  it('refuses a login recognised as a revoked user until they are reinstated; a joint holder still signs in', async () => {
    const john = await added(connections.addGrant(grant({ accountIds: ['j1', 'joint'], holderName: 'John Doe' })));
    expect(await connections.revokeUser(john.userId)).toBe(true);
    expect(await connections.addGrant(grant({ accountIds: ['j1', 'joint'], holderName: 'John Doe' }))).toEqual({ kind: 'refused', reason: 'revoked' });
    expect(await connections.addGrant(grant({ accountIds: ['j1', 'joint', 'j2'], holderName: 'John Doe' }))).toEqual({ kind: 'refused', reason: 'revoked' });
    const jane = await added(connections.addGrant(grant({ accountIds: ['joint', 'n1'], holderName: 'Jane Doe' })));
    expect(jane.userId).not.toBe(john.userId);
    expect(await connections.reinstateUser(john.userId)).toBe(true);
    expect((await added(connections.addGrant(grant({ accountIds: ['j1', 'joint'], holderName: 'John Doe' })))).userId).toBe(john.userId);
    expect(await connections.reinstateUser('user_nobody')).toBe(false);
  });

  it('adds a login to the signed-in user only when it is shown to be theirs', async () => {
    const john = await added(connections.addGrant(grant({ accountIds: ['j1', 'joint'], holderName: 'John Doe' })));
    const jane = await added(connections.addGrant(grant({ accountIds: ['joint', 'n1'], holderName: 'Jane Doe' })));
    const signedIn = { kind: 'signed-in' as const, userId: john.userId };
    // Jane's login, on John's browser: recognised as hers, or not yet seen but sharing his joint account.
    expect(await connections.addGrant(grant({ accountIds: ['joint', 'n1'], holderName: 'Jane Doe' }), signedIn)).toEqual({
      kind: 'refused',
      reason: 'another-user',
    });
    expect(await connections.addGrant(grant({ accountIds: ['joint', 'z1'], holderName: 'Zoe Doe' }), signedIn)).toEqual({
      kind: 'refused',
      reason: 'not-shown-to-be-yours',
    });
    // Someone else's unrelated login, or one without a name: nothing shows it is John's.
    expect(await connections.addGrant(grant({ accountIds: ['x1'], holderName: 'Xavier Roe' }), signedIn)).toEqual({
      kind: 'refused',
      reason: 'not-shown-to-be-yours',
    });
    expect(await connections.addGrant(grant({ providerId: 'mock-north', accountIds: ['x2'] }), signedIn)).toEqual({
      kind: 'refused',
      reason: 'not-shown-to-be-yours',
    });
    // John's own login at another bank (same name), and his login again: added to him.
    expect((await added(connections.addGrant(grant({ providerId: 'mock-north', accountIds: ['n9'], holderName: 'John Doe' }), signedIn))).userId).toBe(
      john.userId,
    );
    expect((await added(connections.addGrant(grant({ accountIds: ['j1', 'joint'], holderName: 'John Doe' }), signedIn))).userId).toBe(john.userId);
    expect((await connections.connectionsOf(jane.userId)).map((connection) => connection.status)).toEqual(['active']);
  });

  it('gives an app user the grant the app connected, whatever it shows', async () => {
    const app = await connections.appUser('https://idp.example/', 'sub-9');
    const linked = await added(connections.addGrant(grant({ accountIds: ['a1'] }), { kind: 'app-user', userId: app.userId }));
    expect(linked.userId).toBe(app.userId);
  });

  it("keeps a login's view current: an account shown after sign-in must be in the next grant too", async () => {
    const first = await added(connections.addGrant(grant({ accountIds: ['old'], holderName: 'John Doe' })));
    const [connection] = await connections.connectionsOf(first.userId);
    await connections.recordSeen(connection!, 'account', ['old', 'opened-later']);
    await connections.recordSeen(connection!, 'account', ['opened-later']);
    expect((await added(connections.addGrant(grant({ accountIds: ['old', 'opened-later'], holderName: 'John Doe' })))).userId).toBe(first.userId);
    // A same-named co-holder of only the old account does not take this user.
    expect((await added(connections.addGrant(grant({ accountIds: ['old'], holderName: 'John Doe' })))).userId).not.toBe(first.userId);
  });

  it("remembers a user's connection list for a moment, and forgets it at once on a change made here or announced", async () => {
    const first = await added(connections.addGrant(grant({ accountIds: ['a1'] })));
    const second = await added(connections.addGrant(grant({ providerId: 'mock-north', accountIds: ['n1'] }), { kind: 'app-user', userId: first.userId }));
    // Sorted: two connections made within one millisecond have no creation order to keep, and order is not what this checks.
    const ids = async (): Promise<string[]> => (await connections.connectionsOf(first.userId)).map((connection) => connection.id).sort();
    const both = [first.connectionId, second.connectionId].sort();
    expect(await ids()).toEqual(both);
    // A change this store did not make (another instance's) is not seen while the list is remembered...
    await database.db.updateTable('bankConnections').set({ status: 'revoked' }).where('id', '=', second.connectionId).execute();
    expect(await ids()).toEqual(both);
    // ...until the bus announces it (server.ts calls forgetConnections for every identity event).
    connections.forgetConnections(first.userId);
    expect(await ids()).toEqual([first.connectionId]);
    // A change made through this store is seen at once.
    await connections.revoke(first.userId, first.connectionId);
    expect(await ids()).toEqual([]);
    const third = await added(connections.addGrant(grant({ accountIds: ['a2'] }), { kind: 'app-user', userId: first.userId }));
    expect(await ids()).toEqual([third.connectionId]);
    await connections.markExpired(third.connectionId);
    expect((await connections.connectionsOf(first.userId)).map((connection) => connection.status)).toEqual(['expired']);
    await connections.revokeUser(first.userId);
    expect(await ids()).toEqual([]);
  });

  it('reads the connection list again once it is older than recentMs', async () => {
    let now = 1_000_000;
    const clocked = new ConnectionStore(database, new TokenCipher(randomBytes(32)), () => now, 1_000);
    const { userId, connectionId } = await added(clocked.addGrant(grant({ accountIds: ['a1'] })));
    expect(await clocked.connectionsOf(userId)).toHaveLength(1);
    await database.db.updateTable('bankConnections').set({ status: 'revoked' }).where('id', '=', connectionId).execute();
    now += 1_000;
    expect(await clocked.connectionsOf(userId)).toHaveLength(1);
    now += 1;
    expect(await clocked.connectionsOf(userId)).toHaveLength(0);
  });

  it('links a grant to the given user, and keeps a revoked user revoked', async () => {
    const app = await connections.appUser('https://idp.example/', 'sub-1');
    expect(await connections.appUser('https://idp.example/', 'sub-1')).toEqual(app);
    const linked = await added(connections.addGrant(grant({ accountIds: ['a1'] }), { kind: 'app-user', userId: app.userId }));
    expect(linked.userId).toBe(app.userId);
    expect(await connections.tokens(linked.connectionId)).toEqual(tokens);

    const sessions = new SessionStore(database, 0);
    const { sessionToken } = await sessions.create(app.userId);
    expect((await sessions.get(sessionToken))?.userId).toBe(app.userId);
    expect(await connections.revokeUser(app.userId)).toBe(true);
    expect(await sessions.get(sessionToken)).toBeUndefined();
    expect(await connections.tokens(linked.connectionId)).toBeUndefined();
    expect(await connections.appUser('https://idp.example/', 'sub-1')).toEqual({ userId: app.userId, revoked: true });
    expect(await connections.revokeUser('user_nobody')).toBe(false);
  });
});
