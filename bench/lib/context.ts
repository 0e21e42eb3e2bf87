import type { BenchSettings } from './settings';
import type { Children } from './stacks';
import type { Row } from './table';

export interface BenchContext {
  settings: BenchSettings;
  children: Children;
  rows: Row[];
  /** Progress, on stderr, so stdout carries only the table. */
  progress(message: string): void;
}
