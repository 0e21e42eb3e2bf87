import type { DataResource, DataTaskStatus } from './data-task.model';
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
