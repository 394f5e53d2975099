/** The best k rows of a search, kept in a fixed-size heap, and the dense layout's column scan. */
import type { QueryPlan } from "./sparse-vector.js";

/**
 * Fixed-size min-heap of (score, row) keeping the best `k` rows seen. Ties on score are broken by
 * id (smaller id ranks first), so results do not depend on insertion order.
 */
export class TopK {
  readonly scores: Float64Array;
  readonly rows: Int32Array;
  size = 0;

  constructor(
    readonly k: number,
    private readonly idOf: (row: number) => string,
  ) {
    this.scores = new Float64Array(k);
    this.rows = new Int32Array(k);
  }

  /** True when (sa, ra) ranks below (sb, rb). */
  private worse(sa: number, ra: number, sb: number, rb: number): boolean {
    if (sa !== sb) return sa < sb;
    return this.idOf(ra) > this.idOf(rb);
  }

  /** True when a row with this score could enter the heap (cheap pre-check before filtering). */
  admits(score: number): boolean {
    return this.size < this.k || score >= this.scores[0];
  }

  push(score: number, row: number): void {
    const { scores, rows } = this;
    if (this.size < this.k) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.worse(score, row, scores[parent], rows[parent])) break;
        scores[i] = scores[parent];
        rows[i] = rows[parent];
        i = parent;
      }
      scores[i] = score;
      rows[i] = row;
      return;
    }
    if (!this.worse(scores[0], rows[0], score, row)) return;
    let i = 0;
    const n = this.size;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.worse(scores[r], rows[r], scores[l], rows[l]) ? r : l;
      if (!this.worse(scores[c], rows[c], score, row)) break;
      scores[i] = scores[c];
      rows[i] = rows[c];
      i = c;
    }
    scores[i] = score;
    rows[i] = row;
  }

  /** The lowest score kept (the k-th best once full); -Infinity while empty. */
  get worstScore(): number {
    return this.size === 0 ? Number.NEGATIVE_INFINITY : this.scores[0];
  }

  /** Rows and scores, best first. */
  sorted(): Array<[row: number, score: number]> {
    const out: Array<[number, number]> = [];
    for (let i = 0; i < this.size; i++) out.push([this.rows[i], this.scores[i]]);
    out.sort((a, b) => (this.worse(a[1], a[0], b[1], b[0]) ? 1 : this.worse(b[1], b[0], a[1], a[0]) ? -1 : 0));
    return out;
  }
}

/**
 * Dense layout: adds the query's products into `scores` for the first `rows` rows of a
 * column-major matrix (dimension `d` of row `r` at `d * capacity + r`).
 */
export function scoreColumns(
  data: Float32Array,
  capacity: number,
  rows: number,
  plan: QueryPlan,
  scores: Float64Array,
): void {
  const n = rows;
  const { dims, weights } = plan;
  // Four dimensions per pass (a quarter of the loads and stores of `scores`), added one after
  // the other: the same sum, in the same order, as the inverted walk.
  let i = 0;
  for (; i + 4 <= dims.length; i += 4) {
    const w0 = weights[i],
      w1 = weights[i + 1],
      w2 = weights[i + 2],
      w3 = weights[i + 3];
    const b0 = dims[i] * capacity,
      b1 = dims[i + 1] * capacity,
      b2 = dims[i + 2] * capacity,
      b3 = dims[i + 3] * capacity;
    for (let row = 0; row < n; row++) {
      let s = scores[row];
      s += w0 * data[b0 + row];
      s += w1 * data[b1 + row];
      s += w2 * data[b2 + row];
      s += w3 * data[b3 + row];
      scores[row] = s;
    }
  }
  for (; i < dims.length; i++) {
    const w = weights[i];
    const base = dims[i] * capacity;
    for (let row = 0; row < n; row++) scores[row] += w * data[base + row];
  }
}

/**
 * The value of rank `n` (0 the largest) among the first `count` entries of `a`: a quickselect
 * (Hoare partition, median of three), which reorders `a`.
 */
export function nthLargest(a: Float32Array, count: number, n: number): number {
  let lo = 0;
  let hi = count - 1;
  while (hi > lo) {
    const x = a[lo];
    const y = a[(lo + hi) >> 1];
    const z = a[hi];
    const pivot = x > y ? (y > z ? y : x > z ? z : x) : x > z ? x : y > z ? z : y;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] > pivot) i++;
      while (a[j] < pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i++] = a[j];
        a[j--] = t;
      }
    }
    if (n <= j) hi = j;
    else if (n >= i) lo = i;
    else return a[n];
  }
  return a[n];
}
