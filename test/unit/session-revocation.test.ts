import { EventEmitter } from 'node:events';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { openDatabase, type Database } from '../../src/platform/db/database';
import { RecentRevocations } from '../../src/platform/access/recent-revocations';
import { sessionKey, SessionStore } from '../../src/identity/session.store';
import { principalCheck } from '../../src/identity/principal-recheck';
import { PrincipalSockets } from '../../src/platform/live/principal-sockets';
import { SubscriptionCaps } from '../../src/platform/live/subscription-caps';
import { storeBackends } from '../helpers/store-backends';

/** Holds the answer of the next query that reads `sessions`, after the database has answered it. */
class HoldSessionReads implements KyselyPlugin {
  private gate: Promise<void> | undefined;
  private release: (() => void) | undefined;
  reached: Promise<void> | undefined;
  private reachedResolve: (() => void) | undefined;

  holdNext(): void {
    this.gate = new Promise((resolve) => (this.release = resolve));
    this.reached = new Promise((resolve) => (this.reachedResolve = resolve));
  }

  let(): void {
    this.release?.();
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const gate = this.gate;
    if (gate && args.result.rows.length > 0 && 'expiresAtMs' in args.result.rows[0]!) {
      this.gate = undefined;
      this.reachedResolve?.();
      await gate;
    }
    return args.result;
  }
}

const BACKENDS = storeBackends('session_store');

describe.each(BACKENDS)('SessionStore on $name', (backend) => {
  let database: Database;
  let cleanUp: () => Promise<void>;

  beforeEach(async () => {
    const opened = await backend.open();
    cleanUp = opened.cleanUp;
    database = await openDatabase(opened.url);
    await database.db.insertInto('users').values({ id: 'user_1', issuer: null, subject: null, createdAtMs: Date.now(), revokedAtMs: null }).execute();
  });

  afterEach(async () => {
    await database.close();
    await cleanUp();
  });

  it('does not keep a session read before it was forgotten (a read straddling a logout would answer for a second more)', async () => {
    const hold = new HoldSessionReads();
    const sessions = new SessionStore({ ...database, db: database.db.withPlugin(hold) }, 1_000);
    const { sessionToken } = await sessions.create('user_1');
    hold.holdNext();
    const straddling = sessions.get(sessionToken);
    await hold.reached;
    // The logout is heard while the read's answer is on its way back (SQLite's one connection is the read's until
    // then, so the row goes just after: the next read must find that, not what the straddling read found).
    sessions.forget({ sessionKey: sessionKey(sessionToken) });
    hold.let();
    expect((await straddling)?.userId).toBe('user_1');
    await database.db.deleteFrom('sessions').where('key', '=', sessionKey(sessionToken)).execute();
    expect(await sessions.get(sessionToken)).toBeUndefined();
  });

  it('answers a session from memory for recentMs after reading it, and forgetting a user drops only their sessions', async () => {
    let now = 1_000_000_000;
    await database.db.insertInto('users').values({ id: 'user_2', issuer: null, subject: null, createdAtMs: now, revokedAtMs: null }).execute();
    const sessions = new SessionStore(database, 1_000, { now: () => now });
    const mine = await sessions.create('user_1');
    const theirs = await sessions.create('user_2');
    expect((await sessions.get(mine.sessionToken))?.userId).toBe('user_1');
    expect((await sessions.get(theirs.sessionToken))?.userId).toBe('user_2');
    await database.db.deleteFrom('sessions').execute();
    now += 1_000;
    expect((await sessions.get(theirs.sessionToken))?.userId).toBe('user_2');
    sessions.forget({ userId: 'user_2' });
    expect(await sessions.get(theirs.sessionToken)).toBeUndefined();
    expect((await sessions.get(mine.sessionToken))?.userId).toBe('user_1');
    now += 1;
    expect(await sessions.get(mine.sessionToken)).toBeUndefined();
  });

  it('ends a session unused for the idle timeout, and refreshes "last used" at most every tenth of it (one write, not one per request)', async () => {
    let now = 1_000_000_000;
    const sessions = new SessionStore(database, 0, { idleTimeoutMs: 600_000, now: () => now });
    expect(sessions.touchEveryMs).toBe(60_000);
    const { sessionToken } = await sessions.create('user_1');
    const lastUsed = async (): Promise<number> =>
      Number(
        (await database.db.selectFrom('sessions').select('lastUsedAtMs').where('key', '=', sessionKey(sessionToken)).executeTakeFirstOrThrow()).lastUsedAtMs,
      );
    const created = now;

    now += 59_000;
    expect(await sessions.get(sessionToken)).toBeDefined();
    expect(await lastUsed()).toBe(created);
    now += 1_000;
    expect(await sessions.get(sessionToken)).toBeDefined();
    expect(await lastUsed()).toBe(now);
    const used = now;

    // A check on behalf of an open socket is not a use.
    now += 599_000;
    expect(await sessions.get(sessionToken, { use: false })).toBeDefined();
    expect(await lastUsed()).toBe(used);
    expect(await sessions.liveKeys([sessionKey(sessionToken), 'other'])).toEqual(new Set([sessionKey(sessionToken)]));
    now += 1_000;
    expect(await sessions.liveKeys([sessionKey(sessionToken)])).toEqual(new Set());
    expect(await sessions.get(sessionToken)).toBeUndefined();
  });

  it('tells the periodic socket check which sessions are live and which users are revoked or gone, in batches', async () => {
    const sessions = new SessionStore(database, 0);
    await database.db.insertInto('users').values({ id: 'user_2', issuer: null, subject: null, createdAtMs: Date.now(), revokedAtMs: Date.now() }).execute();
    const live = await sessions.create('user_1');
    const ofRevoked = await sessions.create('user_2');
    const unknownKeys = Array.from({ length: 600 }, (_, index) => `unknown_${index}`);
    const check = principalCheck(database, sessions);
    const answer = await check({
      sessionKeys: [...unknownKeys, sessionKey(live.sessionToken), sessionKey(ofRevoked.sessionToken)],
      userIds: [...unknownKeys, 'user_1', 'user_2'],
    });
    expect(answer.liveSessions).toEqual(new Set([sessionKey(live.sessionToken)]));
    expect(answer.revokedUsers).toEqual(new Set([...unknownKeys, 'user_2']));
  });
});

/** A stand-in for a ws WebSocket: its state, what it was closed with, and its close event. */
class FakeSocket extends EventEmitter {
  readyState = 1;
  closedWith: { code: number; reason: string } | undefined;

  close(code: number, reason: string): void {
    if (this.readyState >= 2) return;
    this.readyState = 2;
    this.closedWith = { code, reason };
  }

  closedByPeer(): void {
    this.readyState = 3;
    this.emit('close');
  }
}

describe('PrincipalSockets', () => {
  const john = { kind: 'user', userId: 'user_john', sessionKey: 'session_john' } as const;

  it('does not register a socket that closed while its owner was being looked up (it would stay for good)', () => {
    const sockets = new PrincipalSockets();
    const socket = new FakeSocket();
    socket.closedByPeer();
    sockets.add(john, socket);
    expect(sockets.close({ kind: 'user-revoked', userId: 'user_john' })).toBe(0);
  });

  it('drops a socket claimed before its lookup when it closes, and closes one claimed under a session that logs out', () => {
    const sockets = new PrincipalSockets();
    const leaving = new FakeSocket();
    sockets.claim(leaving, 'session_john');
    leaving.closedByPeer();
    sockets.add(john, leaving);
    expect(sockets.size).toBe(0);

    const unknown = new FakeSocket();
    sockets.claim(unknown, 'session_unknown');
    sockets.add({ kind: 'invalid', reason: 'The session token is unknown or has expired.' }, unknown);
    expect(sockets.size).toBe(0);
    expect(unknown.closedWith).toBeUndefined();

    const staying = new FakeSocket();
    sockets.claim(staying, 'session_john');
    expect(sockets.close({ kind: 'logout', userId: 'user_john', sessionKey: 'session_john' })).toBe(1);
    expect(staying.closedWith).toEqual({ code: 4401, reason: 'Unauthorized: the session was logged out' });
    expect(sockets.endedBecause(staying)).toEqual({ code: 4401, reason: 'Unauthorized: the session was logged out' });
    expect(sockets.size).toBe(0);
  });

  it('closes a socket whose principal was revoked during its lookup, once registered', () => {
    const revocations = new RecentRevocations();
    const sockets = new PrincipalSockets({ maxSocketsPerPrincipal: 10, recheckMs: 0, revocations });
    const lookup = revocations.begin();
    revocations.heard({ kind: 'user-revoked', userId: 'user_john' });
    const socket = new FakeSocket();
    expect(sockets.add(john, socket, 'user:user_john', lookup)).toBe('Unauthorized: the session or user was revoked while the socket signed in');
    expect(socket.closedWith?.code).toBe(4401);
    revocations.end(lookup);
    // A lookup that starts after the revocation was heard reads the store, which already says so: no memory needed.
    expect(revocations.revokedSince(john, revocations.begin())).toBe(false);
  });

  it('closes, at the recheck, the sockets whose session is no longer live', async () => {
    const sockets = new PrincipalSockets({
      maxSocketsPerPrincipal: 10,
      recheckMs: 0,
      check: async ({ sessionKeys }) => ({ liveSessions: new Set(sessionKeys.filter((key) => key !== 'session_john')), revokedUsers: new Set() }),
    });
    const johns = new FakeSocket();
    const janes = new FakeSocket();
    sockets.add(john, johns, 'user:user_john');
    sockets.add({ kind: 'user', userId: 'user_jane', sessionKey: 'session_jane' }, janes, 'user:user_jane');
    expect(await sockets.recheck()).toBe(1);
    expect(johns.closedWith?.code).toBe(4401);
    expect(janes.closedWith).toBeUndefined();
    expect(sockets.size).toBe(1);
  });
});

describe('RecentRevocations', () => {
  it('keeps a revocation while a lookup older than it runs, and at least retainMs, then forgets it', () => {
    let now = 0;
    const revocations = new RecentRevocations(1_000, () => now);
    const slow = revocations.begin();
    now = 10;
    revocations.heard({ kind: 'logout', userId: 'user_john', sessionKey: 'session_john' });
    now = 5_000;
    revocations.heard({ kind: 'user-revoked', userId: 'user_other' });
    expect(revocations.revokedSince({ userId: 'user_john', sessionKey: 'session_john' }, slow)).toBe(true);
    revocations.end(slow);
    expect(revocations.size).toBe(1);
    now = 6_001;
    revocations.heard({ kind: 'connected', userId: 'user_x', connectionId: 'c' });
    expect(revocations.size).toBe(0);
  });
});

describe('SubscriptionCaps', () => {
  it('counts per principal and gives a place back when a subscription ends', () => {
    const caps = new SubscriptionCaps(2, 2);
    expect(caps.admit(0, 'user:a')).toBeUndefined();
    expect(caps.admit(2, 'user:a')?.extensions).toMatchObject({ code: 'FORBIDDEN', limit: 'WS_MAX_SUBSCRIPTIONS_PER_SOCKET', max: 2 });
    expect(caps.admit(1, 'user:a')).toBeUndefined();
    expect(caps.admit(0, 'user:a')?.extensions).toMatchObject({ code: 'FORBIDDEN', limit: 'MAX_SUBSCRIPTIONS_PER_PRINCIPAL', max: 2 });
    expect(caps.admit(0, 'user:b')).toBeUndefined();
    caps.release('user:a');
    expect(caps.held('user:a')).toBe(1);
    caps.release('user:a');
    expect(caps.held('user:a')).toBe(0);
  });
});
