import type { PassJob } from '../platform/scheduler/scheduler';
import type { DataTaskService } from './data-task.service';

/** Tasks looked at per pass: a backlog is worked through over several passes, not in one burst. */
const BATCH = 100;

/**
 * The data tasks' periodic pass: tasks with no webhook DATA_TASK_WEBHOOK_GRACE_MS after they started have their
 * results fetched by task id and complete (their subscribers with them), or are marked FAILED with the reason;
 * tasks past DATA_TASK_TTL_MS, and those of revoked connections, are forgotten (DataTaskService.reconcile).
 */
export function dataTaskPass(dataTasks: DataTaskService): PassJob {
  return {
    name: 'data-tasks-overdue',
    async run(run) {
      for (const repair of await dataTasks.reconcile(BATCH, () => run.stopping())) run.repaired(repair.kind);
    },
  };
}
