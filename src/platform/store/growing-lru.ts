import { LRUCache } from 'lru-cache';

type GrowingOptions<K extends NonNullable<unknown>, V extends NonNullable<unknown>> = Omit<
  LRUCache.OptionsBase<K, V, unknown>,
  'max' | 'maxSize' | 'sizeCalculation'
>;

/**
 * An LRUCache of at most `entries` entries whose storage grows with use: with `max`, lru-cache allocates every slot
 * up front, memory held for nothing where the bound is a safety limit far above the usual load; a size of one per
 * entry bounds it the same way.
 */
export function growingLru<K extends NonNullable<unknown>, V extends NonNullable<unknown>>(
  entries: number,
  options: GrowingOptions<K, V> = {},
): LRUCache<K, V> {
  return new LRUCache<K, V>({ ...options, maxSize: entries, sizeCalculation: () => 1 });
}
