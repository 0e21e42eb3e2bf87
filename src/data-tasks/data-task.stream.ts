import { requireUser } from '../platform/access/principal';
import { providerIdOf } from '../platform/graphql/node/global-id';
import type { OperationContext } from '../platform/graphql/operation-context';
import type { EventBus } from '../platform/live/event-bus';
import { liveStream } from '../platform/live/live-stream';
import { topics } from '../platform/live/topics';
import type { Logger } from '../platform/observability/logger';
import type { DataTaskService } from './data-task.service';
import { toDataTaskSnapshot, type DataTaskSnapshot } from './data-task.snapshot';
import { dataTaskLifecycle } from './data-task.model';
import { DATA_TASK_TAG } from './data-task.type';

const dataTaskRank = (snapshot: DataTaskSnapshot): number => dataTaskLifecycle.rank(snapshot.status);
const isFinalDataTask = (snapshot: DataTaskSnapshot): boolean => dataTaskLifecycle.isFinal(snapshot.status);

/** What dataTaskUpdated's stream reads. */
export interface DataTaskStreamDeps {
  dataTasks: Pick<DataTaskService, 'requireOwn'>;
  bus: EventBus;
}

/**
 * dataTaskUpdated: the user who started the task (anyone else's is NOT_FOUND, exactly like an unknown id). Checks
 * before anything is acknowledged, listens, sends the current state first, then each change; ends once the task
 * has SUCCEEDED or FAILED.
 */
export function dataTaskStream(deps: DataTaskStreamDeps) {
  return (args: { id?: unknown }, context: OperationContext): Promise<AsyncIterableIterator<DataTaskSnapshot>> =>
    streamDataTask(deps, context, requireUser(context.principal).userId, providerIdOf(args.id as string, DATA_TASK_TAG));
}

async function streamDataTask(
  deps: DataTaskStreamDeps,
  logs: { readonly logger: Logger },
  userId: string,
  id: string,
): Promise<AsyncIterableIterator<DataTaskSnapshot>> {
  const { dataTasks } = deps;
  const task = await dataTasks.requireOwn(userId, id);
  return liveStream<DataTaskSnapshot>({
    bus: deps.bus,
    topic: topics.dataTask(task.id),
    current: async () => [toDataTaskSnapshot(await dataTasks.requireOwn(userId, task.id))],
    fromEvent: (payload) => {
      const snapshot = payload as DataTaskSnapshot;
      return snapshot?.id === task.id ? snapshot : undefined;
    },
    identity: () => task.id,
    rank: dataTaskRank,
    isFinal: isFinalDataTask,
    logs,
  });
}
