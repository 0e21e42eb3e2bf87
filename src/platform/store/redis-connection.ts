import type { createClient } from 'redis';
import type { Logger } from '../observability/logger';

export type RedisClient = ReturnType<typeof createClient>;

/** How long one Redis command may take before the caller gets an error instead of waiting on a dead server. */
const COMMAND_TIMEOUT_MS = 5_000;

/**
 * One node-redis connection, connected on first use and reconnecting on its own. A command issued while Redis is
 * unreachable fails after COMMAND_TIMEOUT_MS instead of hanging the webhook or subscription that needed it.
 * (A subscriber connection is a separate RedisConnection: once it SUBSCRIBEs it can run nothing else.)
 */
export class RedisConnection {
  private client: RedisClient | undefined;
  private connecting: Promise<RedisClient> | undefined;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly name: string,
    private readonly logger: Logger,
  ) {}

  /** The connected client. */
  async get(): Promise<RedisClient> {
    if (this.closed) throw new Error(`redis connection ${this.name} is closed`);
    this.connecting ??= this.connect().catch((error: unknown) => {
      this.connecting = undefined;
      throw error;
    });
    return withTimeout(this.connecting, `connecting to redis (${this.name})`);
  }

  private async connect(): Promise<RedisClient> {
    // node-redis is loaded on first use: an instance without Redis (the default) does not carry it.
    const { createClient } = await import('redis');
    if (this.closed) throw new Error(`redis connection ${this.name} is closed`);
    this.client ??= this.makeClient(createClient);
    await this.client.connect();
    return this.client;
  }

  private makeClient(create: typeof createClient): RedisClient {
    const client = create({
      url: this.url,
      socket: { connectTimeout: COMMAND_TIMEOUT_MS, reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2_000) },
    });
    let lastLogged = 0;
    client.on('error', (error: unknown) => {
      // A dead server makes the client report every reconnect attempt; once a few seconds is plenty for a log.
      if (Date.now() - lastLogged > 5_000) {
        lastLogged = Date.now();
        this.logger.warn({ err: error, redis: this.name }, 'redis connection error');
      }
    });
    return client;
  }

  /** Runs one command with the timeout. */
  async run<T>(what: string, command: (client: RedisClient) => Promise<T>): Promise<T> {
    const client = await this.get();
    return withTimeout(command(client), `redis ${what} (${this.name})`);
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    if (!client) return;
    // A client still trying to reach Redis would wait for it to answer before closing; destroying it does not.
    if (client.isReady) await client.close().catch(() => client.destroy());
    else client.destroy();
  }
}

export function withTimeout<T>(work: Promise<T>, what: string, timeoutMs = COMMAND_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** node-redis URLs: redis:// and rediss://. */
export function isRedisUrl(url: string): boolean {
  return /^rediss?:\/\//.test(url);
}
