import { registerEnumType } from 'type-graphql';

// Values equal the names; see RefundStatus.
export enum DataTaskStatus {
  QUEUED = 'QUEUED',
  RUNNING = 'RUNNING',
  SUCCEEDED = 'SUCCEEDED',
  FAILED = 'FAILED',
}

registerEnumType(DataTaskStatus, { name: 'DataTaskStatus' });
