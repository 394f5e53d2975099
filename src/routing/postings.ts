/**
 * The posting lists of the in-memory index's sparse layout: per dimension, the slots nonzero
 * there and their values, kept in order of decreasing magnitude for the candidate pass
 * (`sparse-search.ts`).
 */

const EMPTY_ROWS = new Int32Array(0);
const EMPTY_VALUES = new Float32Array(0);

/**
 * One dimension's posting list: the rows nonzero there and their values, and the largest
 * magnitude pushed (a bound on any row's entry). Walked whole, the order does not matter (each
 * row gets one product per dimension); for the candidate pass a list is kept in order of
 * decreasing magnitude, so its best `m` entries are its first `m`.
 */
export class Postings {
  rows: Int32Array = EMPTY_ROWS;
  values: Float32Array = EMPTY_VALUES;
  length = 0;
  maxAbs = 0;
  /**
   * How many leading entries are in order of decreasing magnitude (ties by the order they came):
   * the whole list while pushes keep the order; a push that breaks it leaves it where it was.
   */
  private prefix = 0;
  /** {@link probes} as taken when the list held `probedAt` entries. */
  private probed = EMPTY_VALUES;
  private probedAt = -1;

  /**
   * The `size` entries of largest magnitude (the list is put in that order first if a push left
   * it out of order) and the largest magnitude of the others.
   */
  impact(size: number): Impact {
    this.settle(true);
    const m = Math.min(size, this.length);
    return {
      rows: this.rows.subarray(0, m),
      values: this.values.subarray(0, m),
      restMax: m < this.length ? Math.abs(this.values[m]) : 0,
    };
  }

  /**
   * The magnitudes at depths {@link PROBES} (while the list reaches them) of the ordered list:
   * kept until the next push, so a search reads a few bytes a list instead of a cache line a probe.
   */
  probes(): Float32Array {
    this.settle(true);
    if (this.probedAt !== this.length) {
      let n = 0;
      while (n < PROBES.length && PROBES[n] < this.length) n++;
      const out = new Float32Array(n);
      for (let q = 0; q < n; q++) out[q] = Math.abs(this.values[PROBES[q]]);
      this.probed = out;
      this.probedAt = this.length;
    }
    return this.probed;
  }

  /**
   * Puts the list in order now: with `whole`, whatever is out of order; without, only when the
   * entries pushed out of order are at least a quarter of those in order (what the index does
   * after every write, `SparseSearcher.settle`): each entry is then copied a bounded number of
   * times however the list grew (a few at a time or in bulk), and a search that meets a shorter
   * tail merges it in (a copy, not a sort).
   */
  settle(whole = false): void {
    const tail = this.length - this.prefix;
    if (tail > 0 && (whole || 4 * tail >= this.prefix)) this.order();
  }

  /** How many entries have a magnitude of at least `magnitude` (binary search on the ordered list). */
  depthAbove(magnitude: number): number {
    this.settle(true);
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (Math.abs(this.values[mid]) >= magnitude) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Puts the entries in order of decreasing magnitude, ties by position. The first `prefix` are
   * in order already (a list pushed in order, then added to): only the entries after them are
   * sorted, then the two runs are merged, so ordering a long list after a few pushes costs a copy
   * of it, not a sort. The result is the same as sorting the whole list.
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
  }

  push(row: number, value: number): void {
    const magnitude = Math.abs(value);
    const inOrder = this.length === 0 || magnitude <= Math.abs(this.values[this.length - 1]);
    if (this.prefix === this.length && inOrder) this.prefix++;
    if (magnitude > this.maxAbs) this.maxAbs = magnitude;
    if (this.length === this.rows.length) {
      const size = Math.max(4, this.rows.length + (this.rows.length >> 1));
      const rows = new Int32Array(size);
      rows.set(this.rows);
      const values = new Float32Array(size);
      values.set(this.values);
      this.rows = rows;
      this.values = values;
    }
    this.rows[this.length] = row;
    this.values[this.length++] = value;
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
  rows: Int32Array;
  values: Float32Array;
  /** The largest magnitude among the entries left out: a bound on what each of their rows gets from this term. */
  restMax: number;
}

/** The depths at which a list's {@link Postings.probes} are read (by the candidate pass's `impactDepths`): 0 and the powers of two. */
export const PROBES: readonly number[] = [0, ...Array.from({ length: 31 }, (_, j) => 2 ** j)];
