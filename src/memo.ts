/**
 * The one sanctioned form of module-level memory in src: caches of pure functions. A value kept
 * here is what the function would compute again for the same input (a word's stem, a table read
 * from a file the package ships, a model loaded from disk), so no caller can tell whether it was
 * kept: it is not state. Anything whose answer depends on what happened before (who called,
 * what was written, a counter, a flag) lives in an object the app owns, never at module level;
 * `scripts/lint.mjs` refuses a module-level `let`, `var` or mutable collection elsewhere.
 */

/** A bounded cache of a pure function of a string (or number) key: forgotten all at once past `limit`. */
export class PureMemo<K extends string | number, V> {
  private readonly kept = new Map<K, V>();

  constructor(private readonly limit: number) {}

  /** The value for `key`: kept, else computed by `compute` (which must be pure) and kept. */
  get(key: K, compute: (key: K) => V): V {
    const hit = this.kept.get(key);
    if (hit !== undefined || this.kept.has(key)) return hit as V;
    const value = compute(key);
    if (this.kept.size >= this.limit) this.kept.clear();
    this.kept.set(key, value);
    return value;
  }

  /** Forget `key` (a computation that failed, to be tried again). */
  forget(key: K): void {
    this.kept.delete(key);
  }
}

/** A cache of a pure function of an object, held weakly (gone with the object). */
export class WeakPureMemo<K extends object, V> {
  private readonly kept = new WeakMap<K, V>();

  /** The value for `key`: kept, else computed by `compute` (which must be pure) and kept. */
  get(key: K, compute: (key: K) => V): V {
    if (this.kept.has(key)) return this.kept.get(key) as V;
    const value = compute(key);
    this.kept.set(key, value);
    return value;
  }
}

/**
 * A value computed once, on first use (a shipped table, a model from disk). A load that rejects
 * is forgotten, so the next use tries again.
 */
export function lazy<V>(load: () => V): () => V {
  let value: { v: V } | undefined;
  return () => {
    if (value) return value.v;
    const v = load();
    value = { v };
    if (v instanceof Promise) v.catch(() => (value = undefined));
    return v;
  };
}
