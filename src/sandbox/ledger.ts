/** What the provider actually created, once each: the proof that retries and replays never paid or refunded twice. */
export interface LedgerEntry {
  kind: 'withdrawal' | 'refund';
  id: string;
  /** For refunds, the payment refunded. */
  paymentId?: string;
  amount_in_minor: number;
  currency: string;
  created_at: string;
}

export class Ledger {
  private readonly entries: LedgerEntry[] = [];

  record(entry: LedgerEntry): void {
    this.entries.push(entry);
  }

  list(): { withdrawals: LedgerEntry[]; refunds: LedgerEntry[] } {
    return {
      withdrawals: this.entries.filter((entry) => entry.kind === 'withdrawal'),
      refunds: this.entries.filter((entry) => entry.kind === 'refund'),
    };
  }
}
