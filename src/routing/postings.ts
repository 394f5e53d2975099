/**
 * The posting lists of the in-memory index's sparse layout: per dimension, the slots nonzero
 * there and their values, kept in order of decreasing magnitude for the candidate pass
 * (`sparse-search.ts`).
 */

const EMPTY_ROWS = new Int32Array(0);
const EMPTY_VALUES = new Float32Array(0);

/**
 * How much of a posting list {@link Postings.settle} puts in order now.
 * - `write`: a tail pushed out of order is merged in once it holds a quarter as many entries as
 *   the ordered run (what the index does after every write: each entry is then copied a bounded
 *   number of times however the list grew).
 * - `bulk`: also any tail too long for a search to take apart ({@link Postings.searchedApart}):
 *   what a bulk write needs so that the searches after it pay for no merge. A write of a few rows
 *   leaves each list a short tail, which the searches take on its own: nothing is copied.
 * - `whole`: every tail.
 */
export type SettleScope = "write" | "bulk" | "whole";

/** A tail of at most this many entries (or {@link APART_SHARE} of the list, if more) is searched apart. */
const APART_MIN = 64;
/** The share of a list its tail may reach and still be searched apart (see {@link APART_MIN}). */
const APART_SHARE = 1 / 64;
/** A span of the ordered run at most this long is copied entry by entry in {@link Postings.impact} (no views). */
const SHORT_SPAN = 32;

/**
 * One dimension's posting list: the rows nonzero there and their values, and the largest
 * magnitude pushed (a bound on any row's entry). Walked whole, the order does not matter (each
 * row gets one product per dimension); for the candidate pass a list is read in order of
 * decreasing magnitude (ties by position), so its best `m` entries are its first `m`.
 *
 * The entries are two runs: the ordered run the list was last put in order as (extended while
 * pushes keep its order), then a tail of entries pushed since. A search that meets a short tail
 * sorts the tail on its own (a few entries) and reads the two runs as if they were one: the
 * entries, their order and the depths it reads are those of the list merged, to the bit, without
 * copying the list. A long tail is merged in (a copy, not a sort).
 */
export class Postings {
  rows: Int32Array = EMPTY_ROWS;
  values: Float32Array = EMPTY_VALUES;
  length = 0;
  maxAbs = 0;
  /** How many leading entries are in order of decreasing magnitude (ties by position): the ordered run. */
  private prefix = 0;
  /** Entries `prefix` to `sortedTo` are the tail's, in order on their own; those after were pushed since. */
  private sortedTo = 0;
  /**
   * Per sorted tail entry (`prefix + j`), how many entries of the ordered run come before it in
   * the list's order (those at least as large): its depth in the merged list is `j + above[j]`.
   * It does not change while the ordered run does not, so a push costs one binary search.
   */
  private above = EMPTY_ROWS;
  /** {@link probes} as taken when the list held `probedAt` entries. */
  private probed = EMPTY_VALUES;
  private probedAt = -1;

  /**
   * The `size` entries of largest magnitude (`rows` and `values` from `start` to `end`) and the
   * largest magnitude of the others. The list's own arrays when they are all in its ordered run;
   * else merged from both runs into `room` (the caller's, reused across searches; allocated
   * without it): spans of the ordered run copied whole, the tail's entries between them. No view
   * is made: a search reads hundreds of lists.
   */
  impact(size: number, room?: ImpactRoom): Impact {
    this.prepare();
    const m = Math.min(size, this.length);
    const fromTail = this.tailTaken(m);
    const fromPrefix = m - fromTail;
    const { prefix, rows, values, above } = this;
    const nextPrefix = fromPrefix < prefix ? Math.abs(values[fromPrefix]) : 0;
    const nextTail = prefix + fromTail < this.length ? Math.abs(values[prefix + fromTail]) : 0;
    const restMax = Math.max(nextPrefix, nextTail);
    if (fromTail === 0) return { rows, values, start: 0, end: m, restMax };
    const out = room?.take(m) ?? { rows: new Int32Array(m), values: new Float32Array(m), start: 0 };
    let from = 0;
    let at = out.start;
    for (let j = 0; j <= fromTail; j++) {
      const to = j < fromTail ? above[j] : fromPrefix;
      if (to - from > SHORT_SPAN) {
        out.rows.set(rows.subarray(from, to), at);
        out.values.set(values.subarray(from, to), at);
        at += to - from;
      } else {
        // A short span copied by hand (two views a span were most of what a search allocated).
        for (let i = from; i < to; i++, at++) {
          out.rows[at] = rows[i];
          out.values[at] = values[i];
        }
      }
      from = to;
      if (j === fromTail) break;
      out.rows[at] = rows[prefix + j];
      out.values[at++] = values[prefix + j];
    }
    return { rows: out.rows, values: out.values, start: out.start, end: out.start + m, restMax };
  }

  /**
   * The magnitudes at depths {@link PROBES} (while the list reaches them) of the ordered list:
   * kept until the next push, so a search reads a few bytes a list instead of a cache line a probe.
   */
  probes(): Float32Array {
    this.prepare();
    if (this.probedAt !== this.length) {
      let n = 0;
      while (n < PROBES.length && PROBES[n] < this.length) n++;
      const out = new Float32Array(n);
      const { prefix, values } = this;
      for (let q = 0; q < n; q++) {
        // The entry at this depth is the last of the first depth + 1: the smaller of each run's last taken.
        const taken = PROBES[q] + 1;
        const fromTail = this.tailTaken(taken);
        const fromPrefix = taken - fromTail;
        out[q] = Math.min(
          fromPrefix > 0 ? Math.abs(values[fromPrefix - 1]) : Infinity,
          fromTail > 0 ? Math.abs(values[prefix + fromTail - 1]) : Infinity,
        );
      }
      this.probed = out;
      this.probedAt = this.length;
    }
    return this.probed;
  }

  /**
   * Puts the list in order now, as far as `scope` asks ({@link SettleScope}); a tail left is
   * taken apart by the searches.
   */
  settle(scope: SettleScope = "write"): void {
    const tail = this.length - this.prefix;
    if (tail === 0) return;
    if (scope === "whole" || 4 * tail >= this.prefix || (scope === "bulk" && !this.searchedApart())) this.order();
  }

  /** Whether a search takes the tail on its own rather than merging it in: it is short, for the list. */
  searchedApart(): boolean {
    return this.length - this.prefix <= Math.max(APART_MIN, this.length * APART_SHARE);
  }

  /** How many entries have a magnitude of at least `magnitude`. */
  depthAbove(magnitude: number): number {
    this.prepare();
    const { values, prefix } = this;
    return countAbove(values, 0, prefix, magnitude) + countAbove(values, prefix, this.length, magnitude);
  }

  /** Readies the list for a search: a short tail sorted on its own, a long one merged in. */
  private prepare(): void {
    if (this.length === this.prefix) return;
    if (this.searchedApart()) this.sortTail();
    else this.order();
  }

  /** How many of the list's first `size` entries, in order, come from the (sorted) tail. */
  private tailTaken(size: number): number {
    const above = this.above;
    // The most `t` whose entry `t - 1` lies at a depth below `size` (depths rise along the tail).
    let lo = 0;
    let hi = Math.min(this.length - this.prefix, size);
    while (lo < hi) {
      const t = (lo + hi + 1) >> 1;
      if (t - 1 + above[t - 1] < size) lo = t;
      else hi = t - 1;
    }
    return lo;
  }

  /**
   * Sorts the entries pushed since the tail was last sorted and merges them into it, in place
   * from the back (ties by position: those pushed earlier first), with their depths among the
   * ordered run. Costs the tail, not the list.
   */
  private sortTail(): void {
    const from = this.sortedTo;
    const n = this.length;
    if (from === n) return;
    const { prefix, rows, values } = this;
    const order = positionsByMagnitude(values, from, n);
    const k = order.length;
    const newRows = new Int32Array(k);
    const newValues = new Float32Array(k);
    const newAbove = new Int32Array(k);
    for (let i = 0; i < k; i++) {
      newRows[i] = rows[order[i]];
      newValues[i] = values[order[i]];
      newAbove[i] = countAbove(values, 0, prefix, Math.abs(newValues[i]));
    }
    if (this.above.length < n - prefix) {
      const grown = new Int32Array(Math.max(n - prefix, 2 * this.above.length, 8));
      grown.set(this.above.subarray(0, from - prefix));
      this.above = grown;
    }
    const above = this.above;
    let i = from - 1;
    let j = k - 1;
    for (let w = n - 1; j >= 0; w--) {
      // From the back: the later in order of the two, the one pushed later on equal magnitudes.
      if (i < prefix || Math.abs(newValues[j]) <= Math.abs(values[i])) {
        rows[w] = newRows[j];
        values[w] = newValues[j];
        above[w - prefix] = newAbove[j--];
      } else {
        rows[w] = rows[i];
        values[w] = values[i];
        above[w - prefix] = above[i - prefix];
        i--;
      }
    }
    this.sortedTo = n;
  }

  /**
   * Puts the entries in order of decreasing magnitude, ties by position. The ordered run is in
   * order already: only the tail is sorted, then the two runs are merged, so ordering a long list
   * after a few pushes costs a copy of it, not a sort. The result is the same as sorting the
   * whole list (a tail sorted on its own kept its ties in the order they came).
   */
  private order(): void {
    const n = this.length;
    const from = this.prefix;
    const tail = positionsByMagnitude(this.values, from, n);
    const rows = new Int32Array(this.rows.length);
    const values = new Float32Array(this.values.length);
    let a = 0;
    let b = 0;
    for (let i = 0; i < n; i++) {
      // An earlier entry first on equal magnitudes: every one of the prefix precedes the tail.
      const takeTail = a === from || (b < tail.length && Math.abs(this.values[tail[b]]) > Math.abs(this.values[a]));
      const j = takeTail ? tail[b++] : a++;
      rows[i] = this.rows[j];
      values[i] = this.values[j];
    }
    this.rows = rows;
    this.values = values;
    this.prefix = n;
    this.sortedTo = n;
    this.above = EMPTY_ROWS;
  }

  push(row: number, value: number): void {
    const magnitude = Math.abs(value);
    const n = this.length;
    if (this.prefix === n && (n === 0 || magnitude <= Math.abs(this.values[n - 1]))) {
      this.prefix++;
      this.sortedTo++;
    }
    if (magnitude > this.maxAbs) this.maxAbs = magnitude;
    if (n === this.rows.length) {
      const size = Math.max(4, this.rows.length + (this.rows.length >> 1));
      const rows = new Int32Array(size);
      rows.set(this.rows);
      const values = new Float32Array(size);
      values.set(this.values);
      this.rows = rows;
      this.values = values;
    }
    this.rows[n] = row;
    this.values[n] = value;
    this.length = n + 1;
  }
}

/** How many of `values[from..to)`, in order of decreasing magnitude, have a magnitude of at least `magnitude`. */
function countAbove(values: Float32Array, from: number, to: number, magnitude: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (Math.abs(values[mid]) >= magnitude) lo = mid + 1;
    else hi = mid;
  }
  return lo - from;
}

/**
 * Room for {@link Postings.impact} to merge into, reused by one searcher across its searches:
 * `reset` at the start of a search, then each merge takes the next `n` entries. When it runs
 * out it starts new arrays, so what was taken before stays valid until the next `reset`.
 */
export class ImpactRoom {
  private rows = new Int32Array(1024);
  private values = new Float32Array(1024);
  private used = 0;

  reset(): void {
    this.used = 0;
  }

  /** Room for `n` entries: `rows` and `values` from `start` (a new pair of arrays when these are full). */
  take(n: number): { rows: Int32Array; values: Float32Array; start: number } {
    if (this.used + n > this.rows.length) {
      const size = Math.max(n, 2 * this.rows.length);
      this.rows = new Int32Array(size);
      this.values = new Float32Array(size);
      this.used = 0;
    }
    const start = this.used;
    this.used += n;
    return { rows: this.rows, values: this.values, start };
  }
}

/** Positions a sort key of {@link positionsByMagnitude} can tell apart. */
const POSITION_SPAN = 2 ** 21;

/**
 * The positions `from` to `to` (exclusive) of `values` in order of decreasing magnitude, ties by
 * position: one native sort of keys packing the magnitude's float32 bits (ordered as the
 * magnitudes are) above the position, or a comparison sort for runs too long for the keys.
 */
function positionsByMagnitude(values: Float32Array, from: number, to: number): Int32Array {
  const n = to - from;
  const out = new Int32Array(n);
  if (n >= POSITION_SPAN) {
    const order = Array.from({ length: n }, (_, j) => from + j).sort(
      (a, b) => Math.abs(values[b]) - Math.abs(values[a]) || a - b,
    );
    out.set(order);
    return out;
  }
  const keys = new Float64Array(n);
  const bits = new Uint32Array(1);
  const asFloat = new Float32Array(bits.buffer);
  for (let j = 0; j < n; j++) {
    asFloat[0] = Math.abs(values[from + j]);
    // Larger magnitude first, then earlier position: (2^31 - bits) x 2^21 + j is exact below 2^53.
    keys[j] = (0x80000000 - bits[0]) * POSITION_SPAN + j;
  }
  keys.sort();
  for (let i = 0; i < n; i++) out[i] = from + (keys[i] % POSITION_SPAN);
  return out;
}

/** A posting list's entries of largest magnitude (see {@link Postings.impact}). */
export interface Impact {
  /** The entries are `rows[start..end)` and `values[start..end)` (arrays that may hold more). */
  rows: Int32Array;
  values: Float32Array;
  start: number;
  end: number;
  /** The largest magnitude among the entries left out: a bound on what each of their rows gets from this term. */
  restMax: number;
}

/** The depths at which a list's {@link Postings.probes} are read (by the candidate pass's `impactDepths`): 0 and the powers of two. */
export const PROBES: readonly number[] = [0, ...Array.from({ length: 31 }, (_, j) => 2 ** j)];
