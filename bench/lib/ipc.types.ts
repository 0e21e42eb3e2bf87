/**
 * Messages between the bench parent (load generator) and the server children it forks. Each server runs in its
 * own process so that its CPU and memory are its own: the load generator never shares an event loop with the
 * thing it measures, and /proc/<pid>/status gives each server's own peak RSS.
 */

/** Parent -> child. `id` pairs a request with its reply. */
export type ParentMessage =
  | { type: 'start'; id: number; init: unknown }
  | { type: 'memory'; id: number; gc: boolean }
  | { type: 'close'; id: number }
  /** A child's own operation (e.g. a subscriber client's `open`), answered by its `call` handler. */
  | { type: 'call'; id: number; method: string; args: unknown };

/** Child -> parent. */
export type ChildMessage = { type: 'reply'; id: number; ok: true; value: unknown } | { type: 'reply'; id: number; ok: false; error: string };

export interface MemorySample {
  rssBytes: number;
  heapUsedBytes: number;
  externalBytes: number;
  /**
   * Resident pages of V8's young generation (new space). Empty after a GC, but its pages stay mapped, and V8 sizes
   * it to the allocation rate: under a new load it grows in steps, up to 32 MB on 64-bit.
   */
  youngGenerationBytes: number;
  /** False when the child was started without --expose-gc, so the sample includes garbage. */
  collected: boolean;
}
