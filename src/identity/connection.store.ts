import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database';
import type { ConnectionStatus } from '../db/tables';
import { inTransaction, isUniqueViolation } from '../db/transaction';
import { BoundedMap } from '../store/bounded-map';
import { RecentMap } from '../store/recent-map';
import type { TokenCipher } from './token-cipher';

export interface ProviderTokens {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds when the provider's access token expires. */
  expiresAtMs: number;
}

/** What one authorization-code grant showed: the bank, its tokens, and the account and card ids it lets us see. */
export interface Grant {
  providerId: string;
  scopes: string;
  tokens: ProviderTokens;
  accountIds: readonly string[];
  cardIds: readonly string[];
}

export interface BankConnectionRecord {
  id: string;
  userId: string;
  providerId: string;
  status: ConnectionStatus;
  createdAtMs: number;
}

/**
 * Users and their bank connections in the relational store. Each grant becomes a connection; which user it belongs
 * to is decided inside one transaction, so two sign-ins of one person at the same moment cannot make two users.
 */
export class ConnectionStore {
  /** Resource ids this instance has recorded already, so a warm query writes nothing. */
  private readonly recorded = new BoundedMap<string, true>(100_000);
  /**
   * Each user's connection list as read in the last `recentMs` (the read itself, so requests arriving together
   * share it), as sessions are remembered: an executed query otherwise pays a store read before anything else.
   * Every change made through this store forgets the user's list at once; a change on another instance is
   * announced on the event bus (src/identity/identity-events.ts), whose listener calls forgetConnections().
   */
  private readonly recentConnections: RecentMap<string, Promise<readonly BankConnectionRecord[]>>;

  constructor(
    private readonly database: Database,
    private readonly cipher: TokenCipher,
    private readonly now: () => number = Date.now,
    recentMs = 1_000,
  ) {
    this.recentConnections = new RecentMap(10_000, recentMs, () => this.now());
  }

  /**
   * Stores a grant as a new connection of `userId` when given (signed in already, or the app's user), else of the
   * user who saw any of its accounts or cards before (the oldest, should two have), else of a new user. An older
   * connection of that user to the same bank that shares an account or card (active or expired) is replaced by this one.
   */
  async addGrant(grant: Grant, userId?: string): Promise<{ userId: string; connectionId: string }> {
    const connectionId = newId('conn');
    const refreshTokenEnc = this.cipher.encrypt(grant.tokens.refreshToken, connectionId);
    const accessTokenEnc = this.cipher.encrypt(grant.tokens.accessToken, connectionId);
    const resources = [
      ...grant.accountIds.map((resourceId) => ({ kind: 'account' as const, resourceId })),
      ...grant.cardIds.map((resourceId) => ({ kind: 'card' as const, resourceId })),
    ];
    return inTransaction(this.database, async (trx) => {
      const now = this.now();
      const seenBy =
        resources.length === 0
          ? []
          : await trx
              .selectFrom('connectionResources as r')
              .innerJoin('bankConnections as c', 'c.id', 'r.connectionId')
              .innerJoin('users as u', 'u.id', 'c.userId')
              .select(['c.id as connectionId', 'c.userId', 'c.status', 'u.createdAtMs', 'u.revokedAtMs'])
              .where('r.providerId', '=', grant.providerId)
              .where((eb) => eb.or(resources.map((resource) => eb.and([eb('r.kind', '=', resource.kind), eb('r.resourceId', '=', resource.resourceId)]))))
              .execute();
      let owner = userId;
      if (owner === undefined) {
        const known = seenBy.filter((row) => row.revokedAtMs === null).sort((a, b) => a.createdAtMs - b.createdAtMs || a.userId.localeCompare(b.userId))[0];
        owner = known?.userId;
      }
      if (owner === undefined) {
        owner = newId('user');
        await trx.insertInto('users').values({ id: owner, issuer: null, subject: null, createdAtMs: now, revokedAtMs: null }).execute();
      }
      const replaced = [...new Set(seenBy.filter((row) => row.userId === owner && row.status !== 'revoked').map((row) => row.connectionId))];
      if (replaced.length > 0) await trx.updateTable('bankConnections').set({ status: 'revoked' }).where('id', 'in', replaced).execute();
      await trx
        .insertInto('bankConnections')
        .values({
          id: connectionId,
          userId: owner,
          providerId: grant.providerId,
          scopes: grant.scopes,
          refreshTokenEnc,
          accessTokenEnc,
          accessExpiresAtMs: grant.tokens.expiresAtMs,
          status: 'active',
          createdAtMs: now,
          refreshedAtMs: now,
        })
        .execute();
      if (resources.length > 0) {
        await trx
          .insertInto('connectionResources')
          .values(resources.map((resource) => ({ connectionId, providerId: grant.providerId, ...resource })))
          .onConflict((oc) => oc.doNothing())
          .execute();
      }
      return { userId: owner, connectionId };
    }).then((added) => {
      this.forgetConnections(added.userId);
      return added;
    });
  }

  /**
   * Records account or card ids a connection showed after its sign-in (a newly opened account), so the person is
   * still recognised at a later sign-in when the accounts seen at the first one are gone.
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
