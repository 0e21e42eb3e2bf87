/** One row of the bench's single markdown table. Empty cells print as a dash. */
export interface Row {
  scenario: string;
  metric: string;
  bankgraph?: string;
  naive?: string;
  ceiling?: string;
  target?: string;
  /** 'met', 'MISSED' or a note; MISSED is what a reader scans for. */
  verdict?: string;
}

const HEADER = ['scenario', 'metric', 'bankgraph', 'naive gateway', 'node:http ceiling', 'target', 'verdict'];

export function renderTable(rows: readonly Row[]): string {
  const cells = rows.map((row) =>
    [row.scenario, row.metric, row.bankgraph, row.naive, row.ceiling, row.target, row.verdict].map((cell) => escapeCell(cell ?? '–')),
  );
  const lines = [HEADER, HEADER.map(() => '---'), ...cells].map((line) => `| ${line.join(' | ')} |`);
  return lines.join('\n');
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function verdict(met: boolean): string {
  return met ? 'met' : '**MISSED**';
}

/** Numbers as a reader wants them: few digits, thousands separated. */
export function fmt(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-GB', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function mb(bytes: number): string {
  return `${fmt(bytes / (1024 * 1024), 1)} MB`;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
