import { monotonicMs, SubscriberFleet, type Transport } from '../lib/subscribers';
import { runChild } from './child.runtime';

export interface SubscribersInit {
  /** graphql-ws when absent. */
  transport?: Transport;
  /** The transport's endpoint (see SubscriberFleet). */
  url: string;
  authorization: string;
  query: string;
  variables: Record<string, unknown>;
}

export interface OpenArgs {
  count: number;
  concurrency: number;
  timeoutMs: number;
}

export interface ExpectArgs {
  refundId: string;
  status: string;
  timeoutMs: number;
}

/**
 * A fleet of subscribers (graphql-ws, SSE or multipart) in a process of its own, so that tens of thousands of clients do not share one
 * event loop (theirs would then be the slowest part of the measurement). Receipt times are on the machine's
 * monotonic clock (monotonicMs), which the bench process reads too. `reset` closes them all for a fresh round; `arm`
 * starts looking for a refund in a status; `bytes` answers what the subscribers have read so far;
 * `collect` resolves once every subscriber of this fleet has it, with their receipt times.
 */
runChild(async (init) => {
  const { transport = 'ws', url, authorization, query, variables } = init as SubscribersInit;
  const newFleet = (): SubscriberFleet => new SubscriberFleet(transport, url, authorization, query, variables, monotonicMs);
  let fleet = newFleet();
  let armed: Promise<Float64Array> | undefined;
  return {
    info: { pid: process.pid },
    async call(method, args) {
      switch (method) {
        case 'open': {
          const { count, concurrency, timeoutMs } = args as OpenArgs;
          await fleet.open(count, concurrency, timeoutMs);
          return fleet.size;
        }
        case 'reset': {
          // Every subscriber closed, and a fresh fleet for the next `open` (a warm-up round before the measured one).
          await fleet.close();
          fleet = newFleet();
          return null;
        }
        case 'arm': {
          // Armed before the bench triggers the event, so no message can arrive before the fleet looks for it.
          const { refundId, status, timeoutMs } = args as ExpectArgs;
          const times = fleet.expect(refundId, status, timeoutMs);
          times.catch(() => undefined);
          armed = times;
          return null;
        }
        case 'bytes':
          return fleet.bytesRead;
        case 'collect': {
          if (!armed) throw new Error('collect without arm');
          const times = await armed;
          armed = undefined;
          if (fleet.failures.length > 0) throw new Error(`subscribers failed: ${fleet.failures.slice(0, 3).join('; ')}`);
          return Array.from(times);
        }
        default:
          throw new Error(`unknown operation ${method}`);
      }
    },
    async close() {
      await fleet.close();
    },
  };
});
