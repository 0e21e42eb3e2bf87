import { isDeepStrictEqual } from 'node:util';
import type { ViewerGraphData } from './queries';

/**
 * True when two answers hold the same data, decimals compared by value: the naive gateway parses the provider's
 * JSON with JSON.parse, so "12.50" comes back as "12.5" and "1500.00" as "1500". Anything else that differs means the two gateways did not
 * do the same work, and the comparison would be meaningless.
 */
export function sameDataModuloDecimals(a: string, b: string): boolean {
  const revive = (_key: string, value: unknown): unknown => (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value);
  return isDeepStrictEqual(JSON.parse(a, revive), JSON.parse(b, revive));
}

/** The answer has the shape the fixtures were sized for, so the bench measures the query it says it measures. */
export function expectShape(data: ViewerGraphData, accounts: number, cards: number, first: number, what: string): void {
  const problems: string[] = [];
  if (data.viewer.accounts.length !== accounts) problems.push(`${data.viewer.accounts.length} accounts, not ${accounts}`);
  if (data.viewer.cards.length !== cards) problems.push(`${data.viewer.cards.length} cards, not ${cards}`);
  for (const owner of [...data.viewer.accounts, ...data.viewer.cards]) {
    if (owner.balance === null) problems.push(`no balance for ${owner.id}`);
    const expected = Math.min(first, owner.transactions.totalCount);
    if (owner.transactions.nodes.length !== expected || expected === 0) problems.push(`${owner.transactions.nodes.length} transactions for ${owner.id}`);
  }
  if (problems.length > 0) throw new Error(`${what}: unexpected answer: ${problems.slice(0, 5).join('; ')}`);
}

/**
 * The first payload of the deferred query: both lists, every account and card in it without its balance or
 * transactions (those are deferred), so it is what one provider round trip can answer.
 */
export function expectListsOnly(data: Record<string, unknown>, accounts: number, cards: number, what: string): void {
  const viewer = data.viewer as { accounts?: Record<string, unknown>[]; cards?: Record<string, unknown>[] } | undefined;
  const problems: string[] = [];
  if (viewer?.accounts?.length !== accounts) problems.push(`${viewer?.accounts?.length ?? 'no'} accounts, not ${accounts}`);
  if (viewer?.cards?.length !== cards) problems.push(`${viewer?.cards?.length ?? 'no'} cards, not ${cards}`);
  for (const owner of [...(viewer?.accounts ?? []), ...(viewer?.cards ?? [])]) {
    if (typeof owner.id !== 'string') problems.push('an account or card without an id');
    if ('balance' in owner || 'transactions' in owner) problems.push(`${String(owner.id)} has its balance or transactions in the first payload`);
  }
  if (problems.length > 0) throw new Error(`${what}: unexpected first payload: ${problems.slice(0, 5).join('; ')}`);
}
