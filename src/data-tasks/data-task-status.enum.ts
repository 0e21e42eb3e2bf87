import { registerEnumType } from 'type-graphql';
import type { DataTaskStatus as DataTaskStatusName } from './data-task.model';

// Values equal the names; see RefundStatus. The domain's union (data-task.model.ts) is the type.
export const DataTaskStatus = {
  QUEUED: 'QUEUED',
  RUNNING: 'RUNNING',
  SUCCEEDED: 'SUCCEEDED',
  FAILED: 'FAILED',
} as const satisfies { [K in DataTaskStatusName]: K };
export type DataTaskStatus = DataTaskStatusName;

registerEnumType(DataTaskStatus, { name: 'DataTaskStatus' });
