/**
 * Per-partition (per-caller) state held in memory is bounded: every new caller may add an entry,
 * so a map keyed by partition, caller or thread keeps at most a cap of them, the least recently
 * used forgotten first. What is forgotten is only a cache or a count: it is read again, or starts
 * over (see each user's doc for what that costs).
 */

/** The default cap of a per-partition map: partitions (or partition and tool pairs) kept. */
export const MAX_PARTITIONS_IN_MEMORY = 10_000;

/**
 * A `Map` that keeps at most `cap` entries: `get` and `set` make an entry the most recent, and a
 * `set` past the cap forgets the least recent (and tells `onEvict`). Iteration is oldest first.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  readonly cap: number;
  private readonly onEvict: ((key: K, value: V) => void) | undefined;

  constructor(cap: number = MAX_PARTITIONS_IN_MEMORY, onEvict?: (key: K, value: V) => void) {
    super();
    this.cap = Math.max(1, Math.floor(cap));
    this.onEvict = onEvict;
  }

  override get(key: K): V | undefined {
    if (!super.has(key)) return undefined;
    const value = super.get(key) as V;
    super.delete(key);
    super.set(key, value);
    return value;
  }

  override set(key: K, value: V): this {
    super.delete(key);
    super.set(key, value);
    while (super.size > this.cap) {
      const [oldest, gone] = super.entries().next().value as [K, V];
      super.delete(oldest);
      this.onEvict?.(oldest, gone);
    }
    return this;
  }
}
