/**
 * A status set in order: stages of statuses, each further along than the one before, the last one final. Subscriptions
 * rank values by it (a value ranked below the last one sent is stale) and stores move a status only forward by it.
 */
export interface Lifecycle<S extends string, Word extends string = S> {
  /** The statuses of the last stage: nothing changes after them. */
  readonly final: ReadonlySet<S>;
  /** How far along a status is: the position of its stage, from 0. */
  rank(status: Word): number;
  isFinal(status: Word): boolean;
  /** The statuses of the stages before this status's, in order: those it may replace. */
  before(status: Word): S[];
  /** Whether the word is one of the statuses declared (an open lifecycle ranks others too). */
  knows(word: string): word is S;
}

/** The statuses a lifecycle declares. */
export type StatusOf<L> = L extends Lifecycle<infer S, string> ? S : never;

export function lifecycle<const S extends string>(stages: readonly (readonly S[])[]): Lifecycle<S>;
/** An open set, as a provider's may be: a word not declared ranks with `othersRankWith`. */
export function lifecycle<const S extends string>(stages: readonly (readonly S[])[], open: { othersRankWith: NoInfer<S> }): Lifecycle<S, string>;
export function lifecycle<S extends string>(stages: readonly (readonly S[])[], open?: { othersRankWith: S }): Lifecycle<S, string> {
  const ranks = new Map<string, number>(stages.flatMap((stage, rank) => stage.map((status) => [status, rank] as const)));
  const othersRank = open && ranks.get(open.othersRankWith);
  const finalRank = stages.length - 1;
  const rank = (status: string): number => {
    const found = ranks.get(status) ?? othersRank;
    // Only a closed lifecycle gets here, with a value its type does not allow: a bug, not a status to guess a rank for.
    if (found === undefined) throw new TypeError(`${status} is not a status of this lifecycle`);
    return found;
  };
  return {
    final: new Set(stages[finalRank]),
    rank,
    isFinal: (status) => rank(status) === finalRank,
    before: (status) => stages.slice(0, rank(status)).flat(),
    knows: (word): word is S => ranks.has(word),
  };
}
