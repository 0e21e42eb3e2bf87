/**
 * How long the provider takes to accept a create (a refund or a withdrawal), in real milliseconds.
 * A real provider's write is not instant, and that window is exactly where a retried or duplicated request can
 * arrive while the first is still being processed: the case idempotency keys exist for. Without it the sandbox
 * would answer every duplicate after the original had finished and never exercise a client's handling of
 * "still in flight" (409 idempotency-key-concurrency-conflict for refunds).
 */
export const ACCEPT_PROCESSING_MS = 30;

export function acceptProcessing(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ACCEPT_PROCESSING_MS));
}
