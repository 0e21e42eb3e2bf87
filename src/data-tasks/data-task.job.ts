import type { DataClient } from '../platform/provider/data.client';
import type { PassJob, PassRun } from '../platform/scheduler/scheduler';
import { NotFoundError } from '../platform/errors/gateway-errors';
import { DATA_TASK_TTL_MS, resultsTooLarge, type DataTaskStore, type OverdueDataTask } from './data-task.store';
import { toDataTaskSnapshot, type DataTaskSnapshot } from './data-task.snapshot';
import { DataTaskStatus } from './data-task-status.enum';
import { taskBearer } from './task-bearer';

/** Tasks looked at per pass: a backlog is worked through over several passes, not in one burst. */
const BATCH = 100;
const CALL_OPTIONS = { requestId: 'reconciler' };

export interface DataTaskPassDeps {
  tasks: DataTaskStore;
  data: Pick<DataClient, 'taskResults'>;
  /** Where the bank token of the connection a task was started through comes from (task-bearer.ts). */
  connections: Parameters<typeof taskBearer>[0];
  userTokens: Parameters<typeof taskBearer>[1];
  /** dataTaskUpdated: where a task's change goes. */
  publish(taskId: string, snapshot: DataTaskSnapshot): Promise<void>;
  /** DATA_TASK_WEBHOOK_GRACE_MS. */
  webhookGraceMs: number;
  resultsMaxBytes: number;
}

/**
 * The data tasks' periodic pass: tasks with no webhook DATA_TASK_WEBHOOK_GRACE_MS after they started have their
 * results fetched by task id and complete (their subscribers with them), or are marked FAILED with the reason;
 * tasks past DATA_TASK_TTL_MS, and those of revoked connections, are forgotten.
 */
export function dataTaskPass(deps: DataTaskPassDeps): PassJob {
  return {
    name: 'data-tasks-overdue',
    async run(run) {
      const now = Date.now();
      await deps.tasks.forgetStartedBefore(now - DATA_TASK_TTL_MS);
      await deps.tasks.forgetRevokedConnections();
      for (const task of await deps.tasks.overdue(now - deps.webhookGraceMs, BATCH)) {
        if (run.stopping()) return;
        await completeDataTask(deps, run, task);
      }
    },
  };
}

async function completeDataTask(deps: DataTaskPassDeps, run: PassRun, task: OverdueDataTask): Promise<void> {
  const bearer = await taskBearer(deps.connections, deps.userTokens, task.connectionId);
  if (!bearer) return failDataTask(deps, run, task, 'the bank connection that started it ended before its results could be fetched; start the task again');
  let results: unknown[];
  try {
    results = (await deps.data.taskResults(bearer, task.id, task.request.resource, CALL_OPTIONS)) as unknown[];
  } catch (error) {
    if (error instanceof NotFoundError) return failDataTask(deps, run, task, 'the provider has no such task');
    // Not ready yet, or the provider is unavailable: the next pass asks again.
    run.logger.info({ err: error, taskId: task.id }, 'overdue data task not fetched yet');
    return;
  }
  const kept = await deps.tasks.putResults(task.id, results, deps.resultsMaxBytes);
  if (!kept.stored) return failDataTask(deps, run, task, resultsTooLarge(kept.bytes, deps.resultsMaxBytes));
  const at = new Date().toISOString();
  const changed = await deps.tasks.recordState({
    taskId: task.id,
    status: DataTaskStatus.SUCCEEDED,
    providerStatus: 'succeeded',
    completedAt: at,
    updatedAt: at,
  });
  if (changed) await dataTaskRepaired(deps, run, 'data_task_completed', task.id);
}

async function failDataTask(deps: DataTaskPassDeps, run: PassRun, task: OverdueDataTask, reason: string): Promise<void> {
  const at = new Date().toISOString();
  const changed = await deps.tasks.recordState({ taskId: task.id, status: DataTaskStatus.FAILED, providerStatus: reason, completedAt: at, updatedAt: at });
  if (changed) await dataTaskRepaired(deps, run, 'data_task_failed', task.id, reason);
}

async function dataTaskRepaired(deps: DataTaskPassDeps, run: PassRun, kind: string, taskId: string, reason?: string): Promise<void> {
  run.repaired(kind);
  run.logger.info({ taskId, repair: kind, reason }, 'reconciler repaired a data task');
  const task = await deps.tasks.find(taskId);
  if (task) {
    await deps
      .publish(taskId, toDataTaskSnapshot(task))
      .catch((error: unknown) => run.logger.warn({ err: error, taskId }, 'data task change could not be published'));
  }
}
