import { randomBytes } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { LRUCache } from 'lru-cache';
import { growingLru } from '../platform/store/growing-lru';
import type { Database } from '../platform/db/database';
import type { Tables } from '../platform/db/tables';
import { inTransaction, isUniqueViolation } from '../platform/db/transaction';
import { recognisedLogins, type KnownLogin } from './grant-owner.rule';
import { holderDigests } from './holder-name-digest';
import type { TokenCipher } from './token-cipher';

export interface ProviderTokens {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds when the provider's access token expires. */
  expiresAtMs: number;
}

/** What one authorization-code grant showed: the bank, its tokens, the account and card ids it lets us see, and whose. */
export interface Grant {
  providerId: string;
  scopes: string;
  tokens: ProviderTokens;
  accountIds: readonly string[];
  cardIds: readonly string[];
  /** The login holder's full name as the bank gave it (the info scope); undefined when it gave none. */
  holderName?: string;
}

/**
 * Whose a grant may become:
 * - `recognise`: bank identity with nobody signed in: the person the grant is recognised as, else a new user;
 * - `signed-in`: bank identity, adding a bank to the signed-in user: only a grant shown to be that person's;
 * - `app-user`: app identity: the app has signed its user in, and the grant is theirs.
 */
export type GrantOwner = { kind: 'recognise' } | { kind: 'signed-in'; userId: string } | { kind: 'app-user'; userId: string };

/**
 * A grant stored as a connection, or why it was not:
 * - `revoked`: it is recognised as a revoked user's login (until the merchant reinstates them);
 * - `another-user`: a signed-in user tried to add a login recognised as another user's;
 * - `not-shown-to-be-yours`: a signed-in user tried to add a login that nothing shows to be theirs.
 */
export type GrantOutcome =
  { kind: 'added'; userId: string; connectionId: string } | { kind: 'refused'; reason: 'revoked' | 'another-user' | 'not-shown-to-be-yours' };

/** What the bank allows a connection now; the schema's ConnectionStatus enum (connection-status.enum.ts) shows it. */
export type BankConnectionStatus = 'active' | 'expired' | 'revoked';

export interface BankConnectionRecord {
  id: string;
  userId: string;
  providerId: string;
  status: BankConnectionStatus;
  createdAtMs: number;
}

/**
 * Users and their bank connections in the relational store. Each grant becomes a connection; which user it belongs
 * to is decided inside one transaction, so two sign-ins of one person at the same moment cannot make two users.
 */
export class ConnectionStore {
  /** Resource ids this instance has recorded already, so a warm query writes nothing. */
  private readonly recorded = growingLru<string, true>(100_000);
  /**
   * Each user's connection list as read in the last `recentMs` (the read itself, so requests arriving together
   * share it), as sessions are remembered: an executed query otherwise pays a store read before anything else.
   * Every change made through this store forgets the user's list at once; a change on another instance is
   * announced on the event bus (src/identity/identity-events.ts), whose listener calls forgetConnections().
   */
  private readonly recentConnections: LRUCache<string, Promise<readonly BankConnectionRecord[]>>;

  constructor(
    private readonly database: Database,
    private readonly cipher: TokenCipher,
    private readonly now: () => number = Date.now,
    recentMs = 1_000,
  ) {
    // ttlResolution 0: expiry reads the injected clock itself, never a value cached from it.
    this.recentConnections = growingLru(10_000, { ttl: recentMs, ttlResolution: 0, perf: { now: () => this.now() } });
  }

  /**
   * Stores a grant as a new connection of the user `owner` says, decided inside one transaction so that two
   * sign-ins of one person at the same moment cannot make two users (docs/identity.md, "Who a grant belongs to").
   * The owner's older connections at the same bank that share an account or card with it are replaced by it (only
   * the owner's: a joint holder's connection is never touched).
   */
  async addGrant(grant: Grant, owner: GrantOwner = { kind: 'recognise' }): Promise<GrantOutcome> {
    const connectionId = newId('conn');
    const refreshTokenEnc = this.cipher.encrypt(grant.tokens.refreshToken, connectionId);
    const accessTokenEnc = this.cipher.encrypt(grant.tokens.accessToken, connectionId);
    const { current: holderDigest, earlier: earlierHolderDigest } = holderDigests(grant.holderName, (name) => this.cipher.fingerprint(name));
    const resources = [
      ...grant.accountIds.map((resourceId) => ({ kind: 'account' as const, resourceId })),
      ...grant.cardIds.map((resourceId) => ({ kind: 'card' as const, resourceId })),
    ];
    const outcome = await inTransaction(this.database, async (trx): Promise<GrantOutcome> => {
      const now = this.now();
      const known = await this.loginsSharing(trx, grant.providerId, resources);
      const recognised = recognisedLogins({ accounts: new Set(grant.accountIds), cards: new Set(grant.cardIds), holderDigest, earlierHolderDigest }, known);
      let userId: string | undefined;
      if (owner.kind === 'app-user') {
        userId = owner.userId;
      } else {
        if (recognised.some((login) => login.userRevoked)) return { kind: 'refused', reason: 'revoked' };
        if (owner.kind === 'recognise') {
          userId = recognised[0]?.userId;
        } else if (recognised.length > 0) {
          if (!recognised.some((login) => login.userId === owner.userId)) return { kind: 'refused', reason: 'another-user' };
          userId = owner.userId;
        } else {
          // Not a login of theirs seen before: a new login joins only when it shares nothing with theirs at this bank
          // (sharing but not recognised is a joint holder, or a view the rule cannot tell apart) and carries a name
          // the signed-in user's banks gave too. On a shared browser, this keeps someone else's bank out of the user.
          const sharesWithTheirs = known.some((login) => login.userId === owner.userId);
          if (sharesWithTheirs || holderDigest === undefined || !(await this.hasHolderDigest(trx, owner.userId, holderDigest))) {
            return { kind: 'refused', reason: 'not-shown-to-be-yours' };
          }
          userId = owner.userId;
        }
      }
      if (userId === undefined) {
        userId = newId('user');
        await trx.insertInto('users').values({ id: userId, issuer: null, subject: null, createdAtMs: now, revokedAtMs: null }).execute();
      }
      const replaced = known.filter((login) => login.userId === userId).map((login) => login.connectionId);
      if (replaced.length > 0) {
        await trx.updateTable('bankConnections').set({ status: 'revoked', replacedBy: connectionId }).where('id', 'in', replaced).execute();
      }
      await trx
        .insertInto('bankConnections')
        .values({
          id: connectionId,
          userId,
          providerId: grant.providerId,
          scopes: grant.scopes,
          refreshTokenEnc,
          accessTokenEnc,
          accessExpiresAtMs: grant.tokens.expiresAtMs,
          status: 'active',
          createdAtMs: now,
          refreshedAtMs: now,
          holderDigest: holderDigest ?? null,
          replacedBy: null,
        })
        .execute();
      if (resources.length > 0) {
        await trx
          .insertInto('connectionResources')
          .values(resources.map((resource) => ({ connectionId, providerId: grant.providerId, ...resource })))
          .onConflict((oc) => oc.doNothing())
          .execute();
      }
      return { kind: 'added', userId, connectionId };
    });
    if (outcome.kind === 'added') this.forgetConnections(outcome.userId);
    return outcome;
  }

  /** Every login's latest connection at the bank (any status, any user) that showed any of these accounts or cards. */
  private async loginsSharing(
    trx: Transaction<Tables>,
    providerId: string,
    resources: readonly { kind: 'account' | 'card'; resourceId: string }[],
  ): Promise<KnownLogin[]> {
    if (resources.length === 0) return [];
    // From the resources (their index), so a sign-in reads only the connections that showed what this grant shows.
    const connections = await trx
      .selectFrom('connectionResources as r')
      .innerJoin('bankConnections as c', 'c.id', 'r.connectionId')
      .innerJoin('users as u', 'u.id', 'c.userId')
      .select(['c.id', 'c.userId', 'c.holderDigest', 'c.createdAtMs', 'u.revokedAtMs'])
      .distinct()
      .where('r.providerId', '=', providerId)
      .where((eb) => eb.or(resources.map((resource) => eb.and([eb('r.kind', '=', resource.kind), eb('r.resourceId', '=', resource.resourceId)]))))
      .where('c.replacedBy', 'is', null)
      .execute();
    if (connections.length === 0) return [];
    const shown = await trx
      .selectFrom('connectionResources')
      .select(['connectionId', 'kind', 'resourceId'])
      .where(
        'connectionId',
        'in',
        connections.map((connection) => connection.id),
      )
      .execute();
    const idsOf = (connectionId: string, kind: 'account' | 'card'): Set<string> =>
      new Set(shown.filter((row) => row.connectionId === connectionId && row.kind === kind).map((row) => row.resourceId));
    return connections.map((connection) => ({
      connectionId: connection.id,
      userId: connection.userId,
      userRevoked: connection.revokedAtMs !== null,
      holderDigest: connection.holderDigest,
      accounts: idsOf(connection.id, 'account'),
      cards: idsOf(connection.id, 'card'),
      createdAtMs: Number(connection.createdAtMs),
    }));
  }

  /** Whether any connection of the user (any bank, any status) was made with this holder name. */
  private async hasHolderDigest(trx: Transaction<Tables>, userId: string, holderDigest: string): Promise<boolean> {
    const found = await trx
      .selectFrom('bankConnections')
      .select('id')
      .where('userId', '=', userId)
      .where('holderDigest', '=', holderDigest)
      .limit(1)
      .executeTakeFirst();
    return found !== undefined;
  }

  /**
   * Records account or card ids a connection showed after its sign-in (a newly opened account), so the login's view
   * stays current: a later grant is recognised as this login's only when it shows all of it (grant-owner.rule.ts).
   */
  async recordSeen(connection: Pick<BankConnectionRecord, 'id' | 'providerId'>, kind: 'account' | 'card', resourceIds: readonly string[]): Promise<void> {
    const fresh = resourceIds.filter((resourceId) => !this.recorded.has(`${connection.id}\n${kind}\n${resourceId}`));
    if (fresh.length === 0) return;
    await this.database.db
      .insertInto('connectionResources')
      .values(fresh.map((resourceId) => ({ connectionId: connection.id, kind, providerId: connection.providerId, resourceId })))
      .onConflict((oc) => oc.doNothing())
      .execute();
    for (const resourceId of fresh) this.recorded.set(`${connection.id}\n${kind}\n${resourceId}`, true);
  }

  /** The app's user for (iss, sub), made on first sight. */
  async appUser(issuer: string, subject: string): Promise<{ userId: string; revoked: boolean }> {
    const find = () =>
      this.database.db.selectFrom('users').select(['id', 'revokedAtMs']).where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst();
    const existing = await find();
    if (existing) return { userId: existing.id, revoked: existing.revokedAtMs !== null };
    const id = newId('user');
    try {
      await this.database.db.insertInto('users').values({ id, issuer, subject, createdAtMs: this.now(), revokedAtMs: null }).execute();
      return { userId: id, revoked: false };
    } catch (error) {
      // Another request (or instance) made this user first: theirs is the one.
      if (!isUniqueViolation(error)) throw error;
      const made = await find();
      if (!made) throw error;
      return { userId: made.id, revoked: made.revokedAtMs !== null };
    }
  }

  /** Every connection of the user that has not been revoked (active and expired), oldest first. */
  connectionsOf(userId: string): Promise<readonly BankConnectionRecord[]> {
    const remembered = this.recentConnections.get(userId);
    if (remembered) return remembered;
    const records = this.readConnections(userId);
    this.recentConnections.set(userId, records);
    // A failed read is not remembered (only this read: a forget and a newer read may have replaced it).
    records.catch(() => {
      if (this.recentConnections.get(userId) === records) this.recentConnections.delete(userId);
    });
    return records;
  }

  /** Drops this instance's remembered connection list of the user: after a change here, or one announced on the bus. */
  forgetConnections(userId: string): void {
    this.recentConnections.delete(userId);
  }

  private async readConnections(userId: string): Promise<readonly BankConnectionRecord[]> {
    const rows = await this.database.db
      .selectFrom('bankConnections')
      .select(['id', 'userId', 'providerId', 'status', 'createdAtMs'])
      .where('userId', '=', userId)
      .where('status', '!=', 'revoked')
      .orderBy('createdAtMs')
      .orderBy('id')
      .execute();
    // Shared by every request that reads the list while it is remembered: none may change it for the others.
    return Object.freeze(rows.map((row) => Object.freeze(row)));
  }

  /** The connection's current tokens, when it is still active. */
  async tokens(connectionId: string): Promise<ProviderTokens | undefined> {
    const row = await this.database.db
      .selectFrom('bankConnections')
      .select(['refreshTokenEnc', 'accessTokenEnc', 'accessExpiresAtMs'])
      .where('id', '=', connectionId)
      .where('status', '=', 'active')
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      accessToken: this.cipher.decrypt(row.accessTokenEnc, connectionId),
      refreshToken: this.cipher.decrypt(row.refreshTokenEnc, connectionId),
      expiresAtMs: row.accessExpiresAtMs,
    };
  }

  async updateTokens(connectionId: string, tokens: ProviderTokens): Promise<void> {
    await this.database.db
      .updateTable('bankConnections')
      .set({
        accessTokenEnc: this.cipher.encrypt(tokens.accessToken, connectionId),
        refreshTokenEnc: this.cipher.encrypt(tokens.refreshToken, connectionId),
        accessExpiresAtMs: tokens.expiresAtMs,
        refreshedAtMs: this.now(),
      })
      .where('id', '=', connectionId)
      .where('status', '=', 'active')
      .execute();
  }

  /** The bank no longer honours the grant (its refresh failed for good): shown as EXPIRED until signed in again. */
  async markExpired(connectionId: string): Promise<void> {
    const expired = await this.database.db
      .updateTable('bankConnections')
      .set({ status: 'expired' })
      .where('id', '=', connectionId)
      .where('status', '=', 'active')
      .returning('userId')
      .executeTakeFirst();
    // Not announced on the bus: another instance shows the connection as active until its list is read again
    // (within recentMs), and its calls with the ended grant fail as they would have anyway.
    if (expired) this.forgetConnections(expired.userId);
  }

  /** Revokes one of the user's connections; undefined when the user has no such connection. */
  async revoke(userId: string, connectionId: string): Promise<BankConnectionRecord | undefined> {
    const found = await this.database.db
      .updateTable('bankConnections')
      .set({ status: 'revoked' })
      .where('id', '=', connectionId)
      .where('userId', '=', userId)
      .returning(['id', 'userId', 'providerId', 'status', 'createdAtMs'])
      .executeTakeFirst();
    this.forgetConnections(userId);
    return found;
  }

  /**
   * Lifts a revocation: the user may sign in again (their logins are recognised as theirs, each sign-in making a new
   * connection) and their app tokens are accepted again. Sessions and connections ended by the revocation stay ended.
   * False when there is no such user.
   */
  async reinstateUser(userId: string): Promise<boolean> {
    const found = await this.database.db.updateTable('users').set({ revokedAtMs: null }).where('id', '=', userId).returning('id').executeTakeFirst();
    return found !== undefined;
  }

  /** Revokes the user: their sessions go, their connections stop; false when there is no such user. */
  async revokeUser(userId: string): Promise<boolean> {
    const revoked = await inTransaction(this.database, async (trx) => {
      const found = await trx.updateTable('users').set({ revokedAtMs: this.now() }).where('id', '=', userId).returning('id').executeTakeFirst();
      if (!found) return false;
      await trx.updateTable('bankConnections').set({ status: 'revoked' }).where('userId', '=', userId).execute();
      await trx.deleteFrom('sessions').where('userId', '=', userId).execute();
      return true;
    });
    this.forgetConnections(userId);
    return revoked;
  }
}

function newId(prefix: string): string {
  return `${prefix}_${randomBytes(16).toString('base64url')}`;
}
