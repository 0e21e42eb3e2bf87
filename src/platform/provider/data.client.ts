/*
 * The account-data API, with the end user's token (scope accounts). Bodies are parsed with parseDecimalJson so
 * amounts keep their digits. Async tasks are fetched back by task id from {data_url}, never by following a
 * results_uri from a webhook body: that address is attacker-controllable input, and following it would hand the
 * user's bearer token to whatever host it names.
 */
import type { BearerAuth, CallOptions, ProviderHttpClient } from './http.client';
import { callOptionsOf, providerUrl } from './http.client';
import type { ProviderList } from './provider-list';
import type {
  ProviderAccount,
  ProviderAccountBalance,
  ProviderCard,
  ProviderCardBalance,
  ProviderTaskAck,
  ProviderTransaction,
  ProviderUserInfo,
} from './provider-types';

export interface DataClientConfig {
  dataUrl: string;
  /** False (FAST_PATHS=off): every list parsed whole as it arrives, instead of kept as bytes and parsed where read (provider-list.ts). */
  lazyLists?: boolean;
}

/** Inclusive dates, YYYY-MM-DD; omitted, the whole history. */
export interface DateRange {
  from?: string;
  to?: string;
}

/** One data call. `id` is the account id, or the card's account_id. */
export type DataRequest =
  | { resource: 'accounts' }
  | { resource: 'cards' }
  | ({ resource: 'accountTransactions' | 'cardTransactions'; id: string } & DateRange)
  | { resource: 'accountPendingTransactions' | 'cardPendingTransactions' | 'accountBalance' | 'cardBalance'; id: string };

export interface DataResults {
  accounts: ProviderAccount;
  cards: ProviderCard;
  accountTransactions: ProviderTransaction;
  cardTransactions: ProviderTransaction;
  accountPendingTransactions: ProviderTransaction;
  cardPendingTransactions: ProviderTransaction;
  accountBalance: ProviderAccountBalance;
  cardBalance: ProviderCardBalance;
}

export type DataResource = keyof DataResults;

function target(request: DataRequest): { path: string; query: Record<string, string | undefined> } {
  const id = 'id' in request ? encodeURIComponent(request.id) : '';
  switch (request.resource) {
    case 'accounts':
      return { path: '/data/v1/accounts', query: {} };
    case 'cards':
      return { path: '/data/v1/cards', query: {} };
    case 'accountTransactions':
      return { path: `/data/v1/accounts/${id}/transactions`, query: { from: request.from, to: request.to } };
    case 'cardTransactions':
      return { path: `/data/v1/cards/${id}/transactions`, query: { from: request.from, to: request.to } };
    case 'accountPendingTransactions':
      return { path: `/data/v1/accounts/${id}/transactions/pending`, query: {} };
    case 'cardPendingTransactions':
      return { path: `/data/v1/cards/${id}/transactions/pending`, query: {} };
    case 'accountBalance':
      return { path: `/data/v1/accounts/${id}/balance`, query: {} };
    case 'cardBalance':
      return { path: `/data/v1/cards/${id}/balance`, query: {} };
  }
}

export class DataClient {
  constructor(
    private readonly http: ProviderHttpClient,
    private readonly config: DataClientConfig,
  ) {}

  /** A synchronous call: the `results` array, unwrapped, parsed only where it is read (see provider-list.ts). */
  async fetch<R extends DataRequest>(user: BearerAuth, request: R, options: CallOptions = {}): Promise<ProviderList<DataResults[R['resource']]>> {
    const { path, query } = target(request);
    const url = providerUrl(this.config.dataUrl, path, query);
    if (this.config.lazyLists === false) return this.results(user, `data.${request.resource}`, url, options);
    return this.results(user, `data.${request.resource}`, url, options, true);
  }

  /** For callers that read the whole list (sign-in): parsed at once. */
  private async fetchAll<R extends DataRequest>(user: BearerAuth, request: R, options: CallOptions = {}): Promise<DataResults[R['resource']][]> {
    const { path, query } = target(request);
    return this.results(user, `data.${request.resource}`, providerUrl(this.config.dataUrl, path, query), options);
  }

  /** Queues the call as a task; the provider notifies `webhookUri` when it is done. */
  async startTask(user: BearerAuth, request: DataRequest, webhookUri: string, options: CallOptions = {}): Promise<ProviderTaskAck> {
    const { path, query } = target(request);
    const response = await this.http.send<ProviderTaskAck>({
      route: `data.${request.resource}.async`,
      method: 'GET',
      url: providerUrl(this.config.dataUrl, path, { ...query, async: 'true', webhook_uri: webhookUri }),
      auth: user,
      decimals: true,
      errorContext: { fields: { from: 'input.from', to: 'input.to' } },
      ...callOptionsOf(options),
    });
    return response.body;
  }

  /** A finished task's payload, typed by the resource the task was started for. */
  taskResults<K extends DataResource>(user: BearerAuth, taskId: string, _resource: K, options: CallOptions = {}): Promise<DataResults[K][]> {
    const url = providerUrl(this.config.dataUrl, `/data/v1/results/${encodeURIComponent(taskId)}`);
    return this.results(user, 'data.results', url, options);
  }

  accounts(user: BearerAuth, options?: CallOptions): Promise<ProviderAccount[]> {
    return this.fetchAll(user, { resource: 'accounts' }, options);
  }

  cards(user: BearerAuth, options?: CallOptions): Promise<ProviderCard[]> {
    return this.fetchAll(user, { resource: 'cards' }, options);
  }

  /** Who the login is, as the bank says (scope info; docs/provider-choices.md): read once, at sign-in. */
  info(user: BearerAuth, options: CallOptions = {}): Promise<ProviderUserInfo[]> {
    return this.results(user, 'data.info', providerUrl(this.config.dataUrl, '/data/v1/info'), options);
  }

  accountTransactions(user: BearerAuth, accountId: string, range: DateRange = {}, options?: CallOptions): Promise<ProviderTransaction[]> {
    return this.fetchAll(user, { resource: 'accountTransactions', id: accountId, ...range }, options);
  }

  accountPendingTransactions(user: BearerAuth, accountId: string, options?: CallOptions): Promise<ProviderTransaction[]> {
    return this.fetchAll(user, { resource: 'accountPendingTransactions', id: accountId }, options);
  }

  accountBalance(user: BearerAuth, accountId: string, options?: CallOptions): Promise<ProviderAccountBalance[]> {
    return this.fetchAll(user, { resource: 'accountBalance', id: accountId }, options);
  }

  cardTransactions(user: BearerAuth, cardId: string, range: DateRange = {}, options?: CallOptions): Promise<ProviderTransaction[]> {
    return this.fetchAll(user, { resource: 'cardTransactions', id: cardId, ...range }, options);
  }

  cardPendingTransactions(user: BearerAuth, cardId: string, options?: CallOptions): Promise<ProviderTransaction[]> {
    return this.fetchAll(user, { resource: 'cardPendingTransactions', id: cardId }, options);
  }

  cardBalance(user: BearerAuth, cardId: string, options?: CallOptions): Promise<ProviderCardBalance[]> {
    return this.fetchAll(user, { resource: 'cardBalance', id: cardId }, options);
  }

  private async results<T>(user: BearerAuth, route: string, url: string, options: CallOptions): Promise<T[]>;
  private async results<T>(user: BearerAuth, route: string, url: string, options: CallOptions, lazy: true): Promise<ProviderList<T>>;
  private async results<T>(user: BearerAuth, route: string, url: string, options: CallOptions, lazy = false): Promise<ProviderList<T>> {
    const response = await this.http.send<{ results: ProviderList<T> }>({
      route,
      method: 'GET',
      url,
      auth: user,
      decimals: true,
      lazyResults: lazy,
      errorContext: { fields: { from: 'from', to: 'to' } },
      ...callOptionsOf(options),
    });
    return response.body.results;
  }
}
