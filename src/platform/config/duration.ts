/**
 * The one duration format of every setting: a whole number and its unit, `500ms`, `15s`, `30m`, `12h`, `7d`.
 */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export const DURATION_FORMAT = 'a whole number with a unit (ms, s, m, h or d), e.g. 12h';

/** Milliseconds, or undefined when the text is not a duration in the one format. */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d+)\s*(ms|s|m|h|d)\s*$/.exec(text);
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** The duration written in its largest exact unit (`90000` -> `90s`, `259200000` -> `3d`), as the docs write them. */
export function formatDuration(ms: number): string {
  const [unit, size] = Object.entries(UNIT_MS)
    .reverse()
    .find(([, size]) => ms % size === 0 && ms !== 0) ?? ['ms', 1];
  return `${ms / size}${unit}`;
}

/** A bound as the refusals say it: days when it is whole days, else milliseconds. */
export function describeBound(ms: number): string {
  const days = ms / UNIT_MS.d;
  return ms >= UNIT_MS.d && Number.isInteger(days) ? `${days} day${days === 1 ? '' : 's'}` : `${ms} ms`;
}
