import { context, type Context } from '@opentelemetry/api';
import DataLoader from 'dataloader';
import type { CallOptions, BearerAuth } from './http.client';
import type { DataClient, DataRequest, DataResults } from './data.client';
import type { ProviderList } from './provider-list';
import { requestKey, type CacheMode, type ResponseCache } from './response-cache';

export interface DataUser {
  connectionId: string;
  bearer: BearerAuth;
}

/**
 * One per GraphQL request and user, never shared: within an operation each distinct provider resource is fetched
 * at most once, whatever the query asks for it (the same account twice, `account(id)` next to `accounts`).
 * The provider has no batch endpoint, so a batch is just its calls made in parallel.
 */
export class DataLoaders {
  private readonly loader: DataLoader<DataRequest, ProviderList<unknown>, string>;
  /**
   * The async context each request was asked for in: a batch runs in the first asker's, and each provider call
   * should be traced under the resolver that wanted it (with tracing off this is the empty root context).
   */
  private readonly askedIn = new WeakMap<DataRequest, Context>();

  /**
   * `onRead` hears, for every resource loaded, until when it may be served again (epoch ms; 0 when the call
   * failed, so nothing built on it is kept): the operation's answer is as fresh as its stalest read (see AnswerCache).
   */
  constructor(
    data: DataClient,
    cache: ResponseCache,
    user: DataUser,
    mode: CacheMode,
    options: CallOptions = {},
    onRead: (freshUntilMs: number) => void = () => {},
  ) {
    this.loader = new DataLoader<DataRequest, ProviderList<unknown>, string>(
      // Each request's own promise, not their Promise.all: DataLoader resolves a load with its value, and a promise
      // given as the value is followed, so each field gets its answer when its call ends, not when the batch's
      // slowest does (a deferred transaction list must not hold back the balances answered before it).
      (requests) =>
        Promise.resolve(
          requests.map((request) =>
            cache
              .getOrLoad(user.connectionId, request, mode, () =>
                context.with(this.askedIn.get(request) ?? context.active(), () => data.fetch(user.bearer, request, options) as Promise<ProviderList<unknown>>),
              )
              .then(
                (entry) => {
                  onRead(entry.freshUntilMs);
                  return entry.value;
                },
                (error: unknown) => {
                  onRead(0);
                  throw error instanceof Error ? error : new Error(String(error));
                },
              ),
          ) as unknown as ProviderList<unknown>[],
        ),
      { cacheKeyFn: requestKey },
    );
  }

  load<R extends DataRequest>(request: R): Promise<ProviderList<DataResults[R['resource']]>> {
    this.askedIn.set(request, context.active());
    return this.loader.load(request) as Promise<ProviderList<DataResults[R['resource']]>>;
  }
}
