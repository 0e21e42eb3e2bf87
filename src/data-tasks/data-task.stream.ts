import type { EventBus } from '../platform/live/event-bus';
import { liveStream } from '../platform/live/live-stream';
import { topics } from '../platform/live/topics';
import type { Logger } from '../platform/observability/logger';
import type { DataTaskService } from './data-task.service';
import { toDataTaskSnapshot, type DataTaskSnapshot } from './data-task.snapshot';
import { dataTaskStatusRank, isFinalDataTaskStatus } from './data-task.store';

const dataTaskRank = (snapshot: DataTaskSnapshot): number => dataTaskStatusRank(snapshot.status);
const isFinalDataTask = (snapshot: DataTaskSnapshot): boolean => isFinalDataTaskStatus(snapshot.status);

export interface DataTaskStreamSource {
  dataTasks: DataTaskService;
  bus: EventBus;
  /** The subscribing operation's logger. */
  logs: { readonly logger: Logger };
}

/**
 * dataTaskUpdated: the user who started the task (anyone else's is NOT_FOUND, exactly like an unknown id). Checks
 * before anything is acknowledged, listens, sends the current state first, then each change; ends once the task
 * has SUCCEEDED or FAILED.
 */
export async function dataTaskStream(source: DataTaskStreamSource, userId: string, id: string): Promise<AsyncIterableIterator<DataTaskSnapshot>> {
  const { dataTasks } = source;
  const task = await dataTasks.requireOwn(userId, id);
  return liveStream<DataTaskSnapshot>({
    bus: source.bus,
    topic: topics.dataTask(task.id),
    current: async () => [toDataTaskSnapshot(await dataTasks.requireOwn(userId, task.id))],
    fromEvent: (payload) => {
      const snapshot = payload as DataTaskSnapshot;
      return snapshot?.id === task.id ? snapshot : undefined;
    },
    identity: () => task.id,
    rank: dataTaskRank,
    isFinal: isFinalDataTask,
    logs: source.logs,
  });
}
