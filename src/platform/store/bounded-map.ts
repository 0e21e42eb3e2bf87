/**
 * A Map that forgets its oldest entries past `maxEntries`: the in-memory cache's store. keyv drops an expired
 * entry only when it is read again, so an unbounded Map would keep every key a long-running process ever saw.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly maxEntries: number) {
    super();
  }

  override set(key: K, value: V): this {
    // Re-inserting moves the key to the newest end, so what is evicted is what was written longest ago.
    if (this.has(key)) super.delete(key);
    super.set(key, value);
    while (this.size > this.maxEntries) this.delete(this.keys().next().value as K);
    return this;
  }
}
