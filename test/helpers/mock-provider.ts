import { MockAgent } from 'undici';
import type { MockInterceptor } from 'undici/types/mock-interceptor';
import type { CircuitBreakerSettings } from '../../src/platform/provider/circuit-breakers';
import { ProviderHttpClient, type AttemptEvent, type HttpClientConfig } from '../../src/platform/provider/http.client';
import { DEFAULT_PROVIDER_CALLS } from './config-defaults';

export const ORIGIN = 'https://provider.test';

export interface Recorded {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

function normaliseHeaders(raw: MockInterceptor.MockResponseCallbackOptions['headers']): Record<string, string> {
  const headers: Record<string, string> = {};
  if (!raw) return headers;
  let entries: [string, string][];
  if (raw instanceof Headers) entries = [...raw.entries()];
  else if (Array.isArray(raw)) entries = (raw as string[]).flatMap((v, i, all) => (i % 2 === 0 ? [[v, all[i + 1]!] as [string, string]] : []));
  else entries = Object.entries(raw as Record<string, string>);
  for (const [name, value] of entries) headers[name.toLowerCase()] = String(value);
  return headers;
}

/** An undici MockAgent that records every request (exact body bytes included) and answers from a script. */
/** What a test sets of the client; the rest is the configuration's defaults. */
export type TestClientConfig = Partial<Omit<HttpClientConfig, 'breaker'>> & { breaker?: Partial<CircuitBreakerSettings> };

export function mockProvider(clientConfig: TestClientConfig = {}) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const pool = agent.get(ORIGIN);
  const requests: Recorded[] = [];
  const attempts: AttemptEvent[] = [];
  const sleeps: number[] = [];
  const http = new ProviderHttpClient({
    ...DEFAULT_PROVIDER_CALLS,
    backoffBaseMs: 1,
    backoffCapMs: 5,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    onAttempt: (event) => attempts.push(event),
    ...clientConfig,
    breaker: { ...DEFAULT_PROVIDER_CALLS.breaker, ...clientConfig.breaker },
    dispatcher: agent,
  });

  function on(method: string, path: string | ((path: string) => boolean), ...replies: (Reply | Error)[]): void {
    for (const reply of replies) {
      const interceptor = pool.intercept({ method, path });
      if (reply instanceof Error) {
        interceptor.replyWithError(reply);
        continue;
      }
      interceptor.reply((options) => {
        requests.push({
          method: options.method,
          path: options.path,
          headers: normaliseHeaders(options.headers),
          body: options.body === undefined || options.body === null ? Buffer.alloc(0) : Buffer.from(options.body as Buffer | string),
        });
        const data = typeof reply.body === 'string' || reply.body === undefined ? (reply.body ?? '') : JSON.stringify(reply.body);
        return { statusCode: reply.status, data, responseOptions: { headers: { 'content-type': 'application/json', ...reply.headers } } };
      });
    }
  }

  return {
    agent,
    http,
    requests,
    attempts,
    sleeps,
    on,
    async close() {
      await agent.close();
    },
  };
}

export function networkError(code: string): Error {
  return Object.assign(new Error(`simulated ${code}`), { code });
}

export const problem = (status: number, slug: string, extra: Record<string, unknown> = {}) => ({
  type: `https://docs.truelayer.com/docs/error-types#${slug}`,
  title: slug,
  status,
  detail: `${slug} happened`,
  trace_id: 'trace-abc',
  ...extra,
});
