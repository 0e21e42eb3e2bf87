import { DataTask } from './data-task.type';
import type { DataResource } from './data-resource.enum';
import type { DataTaskStatus } from './data-task-status.enum';
import type { DataTaskRecord } from './data-task.store';

/** A data task as published to subscribers: what the API shows, nothing about its owner or webhook secret. */
export interface DataTaskSnapshot {
  id: string;
  resource: DataResource;
  status: DataTaskStatus;
  createdAt: string;
  completedAt: string | null;
}

export function toDataTaskSnapshot(record: DataTaskRecord): DataTaskSnapshot {
  return { id: record.id, resource: record.resource, status: record.status, createdAt: record.createdAt, completedAt: record.completedAt };
}

/** The result fields stay unset: DataTaskResolver's field resolvers fetch them once the task has succeeded. */
export function toDataTask(snapshot: DataTaskSnapshot): DataTask {
  return Object.assign(new DataTask(), {
    id: snapshot.id,
    resource: snapshot.resource,
    status: snapshot.status,
    createdAt: snapshot.createdAt,
    completedAt: snapshot.completedAt,
  });
}
