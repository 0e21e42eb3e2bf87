/** A waiter's ear on one payout's submission claim: next() resolves at the claim's next release, or after `ms`. */
export interface ClaimReleaseWatch {
  next(ms: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Tells the requests waiting on another's submission (on any instance) that its claim was let go, so they read the
 * outcome at once instead of looking again on a timer; a claim whose instance is gone says nothing and is waited
 * out to its lease's end.
 */
export interface ClaimSignals {
  released(transactionId: string): Promise<void>;
  /** In place when it resolves: every release after that moment reaches it. */
  watch(transactionId: string): Promise<ClaimReleaseWatch>;
}
