import { DataTask } from './data-task.type';
import type { DataTaskSnapshot } from './data-task.snapshot';

/** The result fields stay unset: DataTaskResolver's field resolvers fetch them once the task has succeeded. */
export function toDataTask(snapshot: DataTaskSnapshot): DataTask {
  return Object.assign(new DataTask(), {
    taskId: snapshot.id,
    resource: snapshot.resource,
    status: snapshot.status,
    createdAt: snapshot.createdAt,
    completedAt: snapshot.completedAt,
  });
}
