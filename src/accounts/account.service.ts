import type { BankConnectionRecord, ConnectionStore, UserTokenProvider } from '../identity';
import { BadUserInputError, NotFoundError, UnauthenticatedError } from '../platform/errors/gateway-errors';
import type { DataClient } from '../platform/provider/data.client';
import { DataLoaders } from '../platform/provider/data.loaders';
import type { BearerAuth, CallOptions } from '../platform/provider/http.client';
import type { ProviderList } from '../platform/provider/provider-list';
import type { ProviderAccount, ProviderAccountBalance, ProviderCard, ProviderCardBalance, ProviderTransaction } from '../platform/provider/provider-types';
import type { CacheMode, ResponseCache } from '../platform/provider/response-cache';
import { fromEveryConnection, type FromEveryConnection } from './every-connection';

export interface AccountGraphDeps {
  data: DataClient;
  responseCache: ResponseCache;
  connections: Pick<ConnectionStore, 'connectionsOf' | 'recordSeen'>;
  userTokens: Pick<UserTokenProvider, 'bearerFor'>;
}

/** How one operation reads: from the response cache or past it, with its request id and deadline. */
export interface ReadOptions {
  cacheMode: CacheMode;
  call: CallOptions;
  /** Hears until when each resource read stays fresh (epoch ms; 0 for a failed read). */
  onRead?(freshUntilMs: number): void;
}

/** An account or a card, with the bank connection that shows it (whose loaders serve its balance and transactions). */
export interface AccountRecord {
  connectionId: string;
  account: ProviderAccount;
}
export interface CardRecord {
  connectionId: string;
  card: ProviderCard;
}

/** What the provider lists per account and per card the same way, under different paths. */
export type Holder = 'account' | 'card';
export interface HolderRef {
  id: string;
  connectionId: string;
}
export interface DateRange {
  from?: string;
  to?: string;
}

/** The viewer's account graph: the user's bank connections, and their accounts, cards, balances and transactions. */
export class AccountGraphService {
  constructor(private readonly deps: AccountGraphDeps) {}

  /** One user's reads for one operation: keep it for the operation, so each resource is read from the provider once. */
  readsFor(userId: string, options: ReadOptions): AccountReads {
    return new AccountReads(this.deps, userId, options);
  }
}

/**
 * One operation's reads for one user, never shared: within an operation each distinct provider resource is
 * fetched at most once, whatever the query asks for it (the same account twice, `account(id)` next to `accounts`).
 */
export class AccountReads {
  private connectionList?: Promise<readonly BankConnectionRecord[]>;
  private readonly loaders = new Map<string, DataLoaders>();

  constructor(
    private readonly deps: AccountGraphDeps,
    readonly userId: string,
    private readonly options: ReadOptions,
  ) {}

  /** The user's bank connections that are not revoked, oldest first; read once. */
  connections(): Promise<readonly BankConnectionRecord[]> {
    return (this.connectionList ??= this.deps.connections.connectionsOf(this.userId));
  }

  /** The provider bearer of one of this user's connections, for calls outside the loaders (data tasks, verification). */
  bearerOf(connectionId: string): BearerAuth {
    return this.deps.userTokens.bearerFor(connectionId);
  }

  /** The active connection of this user with that id; NOT_FOUND for anyone else's or an ended one. */
  async activeConnection(connectionId: string): Promise<BankConnectionRecord> {
    const found = (await this.connections()).find((connection) => connection.id === connectionId);
    if (!found) throw new NotFoundError('No bank connection with that id belongs to this user.');
    if (found.status !== 'active') throw new UnauthenticatedError('This bank connection has expired; connect the bank again.');
    return found;
  }

  /** Every active connection's accounts, read in parallel; a failing bank is reported beside the others' accounts. */
  async accounts(): Promise<FromEveryConnection<AccountRecord>> {
    return fromEveryConnection(await this.connections(), async (connection) => {
      // Parsed once here (a provider list parses on every read, see provider-list.ts), then read twice.
      const accounts = (await this.accountsOf(connection.id)).slice();
      await this.deps.connections.recordSeen(
        connection,
        'account',
        accounts.map((account) => account.account_id),
      );
      return accounts.map((account) => ({ connectionId: connection.id, account }));
    });
  }

  async cards(): Promise<FromEveryConnection<CardRecord>> {
    return fromEveryConnection(await this.connections(), async (connection) => {
      const cards = (await this.cardsOf(connection.id)).slice();
      await this.deps.connections.recordSeen(
        connection,
        'card',
        cards.map((card) => card.account_id),
      );
      return cards.map((card) => ({ connectionId: connection.id, card }));
    });
  }

  /** One connection's accounts (the provider has no single-account call). */
  accountsOf(connectionId: string): Promise<ProviderList<ProviderAccount>> {
    return this.loadersFor(connectionId).load({ resource: 'accounts' });
  }

  cardsOf(connectionId: string): Promise<ProviderList<ProviderCard>> {
    return this.loadersFor(connectionId).load({ resource: 'cards' });
  }

  async accountBalance(account: HolderRef): Promise<ProviderAccountBalance | undefined> {
    const [balance] = await this.loadersFor(account.connectionId).load({ resource: 'accountBalance', id: account.id });
    return balance;
  }

  async cardBalance(card: HolderRef): Promise<ProviderCardBalance | undefined> {
    const [balance] = await this.loadersFor(card.connectionId).load({ resource: 'cardBalance', id: card.id });
    return balance;
  }

  /** The whole list for the date range (the provider does not paginate); a range that ends before it starts is refused before any call. */
  async transactions(holder: Holder, source: HolderRef, range: DateRange): Promise<ProviderList<ProviderTransaction>> {
    const { from, to } = range;
    if (from !== undefined && to !== undefined && from > to) {
      throw new BadUserInputError(`from must not be after to; got from ${from} and to ${to}`, 'from');
    }
    const resource = holder === 'account' ? 'accountTransactions' : 'cardTransactions';
    return this.loadersFor(source.connectionId).load({ resource, id: source.id, from, to });
  }

  pendingTransactions(holder: Holder, source: HolderRef): Promise<ProviderList<ProviderTransaction>> {
    const resource = holder === 'account' ? 'accountPendingTransactions' : 'cardPendingTransactions';
    return this.loadersFor(source.connectionId).load({ resource, id: source.id });
  }

  private loadersFor(connectionId: string): DataLoaders {
    let found = this.loaders.get(connectionId);
    if (!found) {
      const { data, responseCache, userTokens } = this.deps;
      // The data cache is keyed by connection: one grant's answers are never another's, whoever the user is.
      found = new DataLoaders(
        data,
        responseCache,
        { connectionId, bearer: userTokens.bearerFor(connectionId) },
        this.options.cacheMode,
        this.options.call,
        this.options.onRead,
      );
      this.loaders.set(connectionId, found);
    }
    return found;
  }
}
