/**
 * The searches of the in-memory index's sparse layout: the exact inverted walk, the exhaustive
 * scan it is checked against, and the candidate pass that keeps a request from touching every
 * tool when its terms are common (see {@link FirstPassOptions} and docs/routing.md).
 */
import type { Document } from "@langchain/core/documents";
import type { SparseRows } from "./sparse-rows.js";
import type { QueryPlan } from "./sparse-vector.js";
import { TopK } from "./top-k.js";
import type { RowFilter } from "./filter-masks.js";

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
  /** True while the entries are in order of decreasing magnitude (ties by the order they came). */
  private ordered = true;

  /**
   * The `size` entries of largest magnitude (the list is put in that order first if a push left
   * it out of order) and the largest magnitude of the others.
   */
  impact(size: number): Impact {
    if (!this.ordered) this.order();
    const m = Math.min(size, this.length);
    return {
      rows: this.rows.subarray(0, m),
      values: this.values.subarray(0, m),
      restMax: m < this.length ? Math.abs(this.values[m]) : 0,
    };
  }

  /** How many entries have a magnitude of at least `magnitude` (binary search on the ordered list). */
  depthAbove(magnitude: number): number {
    if (!this.ordered) this.order();
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
   * Sorts the entries by decreasing magnitude, ties by position: one native sort of keys packing
   * the magnitude's float32 bits (ordered as the magnitudes are) above the position.
   */
  private order(): void {
    const n = this.length;
    if (n >= POSITION_SPAN) {
      this.orderSlowly();
      return;
    }
    const keys = new Float64Array(n);
    const bits = new Uint32Array(1);
    const asFloat = new Float32Array(bits.buffer);
    for (let j = 0; j < n; j++) {
      asFloat[0] = Math.abs(this.values[j]);
      // Larger magnitude first, then earlier position: (2^31 - bits) x 2^21 + j is exact below 2^53.
      keys[j] = (0x80000000 - bits[0]) * POSITION_SPAN + j;
    }
    keys.sort();
    const rows = new Int32Array(this.rows.length);
    const values = new Float32Array(this.values.length);
    for (let i = 0; i < n; i++) {
      const j = keys[i] % POSITION_SPAN;
      rows[i] = this.rows[j];
      values[i] = this.values[j];
    }
    this.rows = rows;
    this.values = values;
    this.ordered = true;
  }

  /** {@link order} for lists too long for its keys. */
  private orderSlowly(): void {
    const n = this.length;
    const order = Array.from({ length: n }, (_, j) => j).sort(
      (a, b) => Math.abs(this.values[b]) - Math.abs(this.values[a]) || a - b,
    );
    const rows = new Int32Array(this.rows.length);
    const values = new Float32Array(this.values.length);
    order.forEach((j, i) => {
      rows[i] = this.rows[j];
      values[i] = this.values[j];
    });
    this.rows = rows;
    this.values = values;
    this.ordered = true;
  }

  push(row: number, value: number): void {
    const magnitude = Math.abs(value);
    if (this.length > 0 && magnitude > Math.abs(this.values[this.length - 1])) this.ordered = false;
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

/** Positions a posting list's sort key can tell apart (see `Postings.order`). */
const POSITION_SPAN = 2 ** 21;

/** A posting list's entries of largest magnitude (see {@link Postings.impact}). */
export interface Impact {
  rows: Int32Array;
  values: Float32Array;
  /** The largest magnitude among the entries left out: a bound on what each of their rows gets from this term. */
  restMax: number;
}

/** What the sparse searches read of the index: its slots and posting lists. */
export interface SparseRowsView {
  /** Per slot, its id; undefined once deleted or replaced. */
  readonly rowIds: ReadonlyArray<string | undefined>;
  readonly rowDocs: ReadonlyArray<Document | undefined>;
  /** Per slot, its nonzero dimensions (ascending) and values. */
  readonly rows: SparseRows;
  /** Per dimension, the slots nonzero there (dead slots included until a compaction). */
  readonly postings: ReadonlyArray<Postings | undefined>;
  /** Live slots. */
  readonly live: number;
  /** Length of the vectors. */
  readonly dimension: number;
}

/**
 * The candidate pass of the in-memory index (sparse layout). A request's terms (its nonzero
 * dimensions: hashed words and character n-grams) are split by how many tools they reach: a
 * term on at most `max(termRows, termShare × tools)` tools is **selective**, and its posting
 * list is walked in full. The lists of **common** terms are held in order of decreasing
 * magnitude, and of them only about `commonPostings` entries in all are walked: those whose
 * contribution (|weight| × |value|) is above one threshold, the same for every term, so a
 * heavy term of the request is walked deeper than a light one. The walk adds each tool's partial
 * score; the `rescore` tools with the best partial scores are then scored exactly (every term of
 * the request, as the exhaustive scan scores them) and the best k of those are the answer.
 *
 * A tool the pass left out scores at most its partial score plus what the common terms'
 * unwalked entries can add (the lesser of the sum of each term's |weight| × the largest entry
 * left out, and the length of the request's common part): when the k-th exact score is above
 * that bound the answer is provably the exact one. When it is not, the pass runs again walking
 * {@link DEEPEN} times as many common postings and rescoring as many times more tools, as long
 * as that stays within `postingBudget`; then it answers unproven (or, with `requireProof`, walks
 * every list). When every term is selective the pass is the exact walk; it is also run when the
 * pass met fewer than k tools.
 */
export interface FirstPassOptions {
  /**
   * A term reaching at most this many tools is selective, whatever the share.
   * @default 1000
   */
  termRows?: number;
  /**
   * A term reaching at most this share of the tools is selective, whatever the count.
   * @default 0.01
   */
  termShare?: number;
  /**
   * Postings walked on the common terms' lists in the first round, in all (those adding most).
   * @default 50000
   */
  commonPostings?: number;
  /**
   * Tools scored exactly after the first round (at least k). The pass's agreement with the exact
   * scan rests mostly on this: at 100,000 made-up-word tools, 256 held the exact top-5 on 96% of
   * requests and 512 on 99.3% (docs/routing.md).
   * @default 512
   */
  rescore?: number;
  /**
   * Most common postings a deeper round may walk (no deeper round when `commonPostings` × 4 is
   * above it, the default: at 100,000 made-up-word tools one deeper round, 4 times the postings
   * and the rescored tools, held the exact top-5 on every request but cost 2.6 times the CPU).
   * @default 50000
   */
  postingBudget?: number;
  /**
   * Run the exact walk whenever the bound does not prove the pass's answer (exact results always,
   * at the cost of walking every list for requests made of common terms).
   * @default false
   */
  requireProof?: boolean;
}

/** The defaults applied to every {@link FirstPassOptions} field left unset. */
export const DEFAULT_FIRST_PASS: Readonly<Required<FirstPassOptions>> = Object.freeze({
  termRows: 1000,
  termShare: 0.01,
  commonPostings: 50_000,
  rescore: 512,
  postingBudget: 50_000,
  requireProof: false,
});

/** How much deeper each round of the candidate pass walks the common lists (and how many more tools it rescores). */
export const DEEPEN = 4;

/** How the searches of one index went (counts since it was built): for tests and benchmarks. */
export interface SearchStats {
  /** Searches that walked every list (every term was selective, the pass was off, or it fell back). */
  exact: number;
  /** Searches answered by the candidate pass, proven exact by the bound. */
  proven: number;
  /** Searches answered by the candidate pass without a proof. */
  unproven: number;
  /** Candidate passes that fell back to the exact walk (too few tools met, or no proof with `requireProof`). */
  fallbacks: number;
  /** Rounds walked again deeper because the bound did not prove the answer (see `postingBudget`). */
  deepened: number;
}

/**
 * What one top-k search walks in the sparse layout (see `InMemoryVectorIndex.searchCost`): how
 * selective the query's dimensions are, and how much a bound-based ("max-score") walk could skip
 * and stay exact.
 */
export interface SearchCost {
  /** The query's nonzero dimensions that have a posting list. */
  lists: number;
  /** Postings on those lists: what the inverted walk adds up. */
  postings: number;
  /** Distinct rows on those lists: every other row scores exactly 0. */
  rowsMet: number;
  /** The k-th best score (the threshold a row must reach). */
  kthScore: number;
  /** The sum over the lists of the most each can add to one score (|weight| × largest |value|). */
  boundSum: number;
  /**
   * Postings of the lists a max-score walk could leave out and stay exact, knowing the k-th score
   * in advance: the lists of smallest bound whose bounds add up to less than it (an upper limit on
   * what that pruning saves; it also re-scores the rows it met).
   */
  skippablePostings: number;
}

/** The sparse layout's searches, with the scratch buffers they reuse. */
export class SparseSearcher {
  readonly stats: SearchStats = { exact: 0, proven: 0, unproven: 0, fallbacks: 0, deepened: 0 };
  private scores = new Float64Array(0);
  /**
   * Partial scores of the candidate pass: zero everywhere between searches. Float32: they only
   * rank candidates (the rescoring is float64, as every other search), and half the bytes keep
   * more of them in cache while the walk adds to tools in no order (at 100,000 tools, 0.3-0.5 ms
   * less CPU a search in a harness run; docs/routing.md). The proof allows for their rounding.
   */
  private partial = new Float32Array(0);
  private marks = new Uint8Array(0);
  private touched = new Int32Array(0);
  /** The query's weight per dimension during a rescore: zero everywhere between searches. */
  private weightOf = new Float64Array(0);

  constructor(private readonly options: Readonly<Required<FirstPassOptions>> | undefined) {}

  private topK(view: SparseRowsView, k: number): TopK {
    return new TopK(Math.min(k, view.live), (row) => view.rowIds[row]!);
  }

  /** The best `k` of the first `rows` scores whose row is live and kept by the filter. */
  private select(view: SparseRowsView, scores: Float64Array, k: number, keep: RowFilter | undefined): TopK {
    const top = this.topK(view, k);
    const ids = view.rowIds;
    for (let row = 0; row < ids.length; row++) {
      const s = scores[row];
      if (!top.admits(s) || ids[row] === undefined) continue;
      if (keep !== undefined && !keep(row)) continue;
      top.push(s, row);
    }
    return top;
  }

  /** A zeroed score per slot. */
  private scoreBuffer(slots: number): Float64Array {
    if (this.scores.length < slots) this.scores = new Float64Array(Math.max(slots, 2 * this.scores.length, 64));
    else this.scores.fill(0, 0, slots);
    return this.scores;
  }

  /**
   * Exact: walks the posting lists of the query's dimensions in ascending order, adding each
   * product to its slot's score. A slot on none of the lists keeps the score 0 a full scan gives
   * it (no product to add), so selecting over every slot gives the exhaustive search's top-k.
   */
  inverted(view: SparseRowsView, plan: QueryPlan | undefined, k: number, keep: RowFilter | undefined): TopK {
    const scores = this.scoreBuffer(view.rowIds.length);
    if (plan !== undefined) {
      const { dims, weights } = plan;
      for (let p = 0; p < dims.length; p++) {
        const list = view.postings[dims[p]];
        if (list === undefined) continue;
        const w = weights[p];
        const { rows, values, length } = list;
        for (let j = 0; j < length; j++) scores[rows[j]] += w * values[j];
      }
    }
    return this.select(view, scores, k, keep);
  }

  /** Exhaustive: scores every live slot from its own entries, in ascending dimension order. */
  scan(view: SparseRowsView, plan: QueryPlan | undefined, k: number, keep: RowFilter | undefined): TopK {
    const slots = view.rowIds.length;
    const scores = this.scoreBuffer(slots);
    if (plan !== undefined) {
      const weightOf = new Float64Array(view.dimension);
      plan.dims.forEach((d, p) => (weightOf[d] = plan.weights[p]));
      for (let slot = 0; slot < slots; slot++) {
        if (view.rowIds[slot] !== undefined) scores[slot] = this.exact(view, slot, weightOf);
      }
    }
    return this.select(view, scores, k, keep);
  }

  /** A slot's exact score: its entries against the query's weights, in ascending dimension order. */
  private exact(view: SparseRowsView, slot: number, weightOf: Float64Array): number {
    return view.rows.dot(slot, weightOf);
  }

  /** The default search: the candidate pass when it is on and some term is common, else the exact walk. */
  search(view: SparseRowsView, plan: QueryPlan | undefined, k: number, keep: RowFilter | undefined): TopK {
    const options = this.options;
    if (options === undefined || plan === undefined) return this.walkAll(view, plan, k, keep);
    const cap = Math.max(options.termRows, Math.ceil(options.termShare * view.live));
    const common = plan.dims.some((d) => (view.postings[d]?.length ?? 0) > cap);
    if (!common) return this.walkAll(view, plan, k, keep);
    let budget = options.commonPostings;
    let rescore = options.rescore;
    for (;;) {
      const pass = this.candidates(view, plan, cap, k, keep, budget, rescore);
      if (pass === undefined) break;
      if (pass.proven) {
        this.stats.proven++;
        return pass.top;
      }
      // Unproven: walk the common lists deeper and rescore more, while the next round fits the budget.
      if (budget * DEEPEN > options.postingBudget) {
        if (options.requireProof) break;
        this.stats.unproven++;
        return pass.top;
      }
      budget *= DEEPEN;
      rescore *= DEEPEN;
      this.stats.deepened++;
    }
    this.stats.fallbacks++;
    return this.walkAll(view, plan, k, keep);
  }

  private walkAll(view: SparseRowsView, plan: QueryPlan | undefined, k: number, keep: RowFilter | undefined) {
    this.stats.exact++;
    return this.inverted(view, plan, k, keep);
  }

  /**
   * The candidate pass's answer with whether the bound proves it, or undefined when it met fewer
   * than k tools (the exact walk must answer).
   */
  private candidates(
    view: SparseRowsView,
    plan: QueryPlan,
    cap: number,
    k: number,
    keep: RowFilter | undefined,
    budget: number,
    rescoreRows: number,
  ): { top: TopK; proven: boolean } | undefined {
    const depths = impactDepths(view, plan, cap, budget);
    const slots = view.rowIds.length;
    if (this.partial.length < slots) {
      const size = Math.max(slots, 2 * this.partial.length, 64);
      this.partial = new Float32Array(size);
      this.marks = new Uint8Array(size);
    }
    if (this.weightOf.length < view.dimension) this.weightOf = new Float64Array(view.dimension);
    const { partial, marks } = this;
    const { dims, weights } = plan;
    let met = 0;
    // What a common list's unwalked entries can add to a row: |weight| x the largest left out,
    // summed; and at most the length of the request's common part (rows are unit vectors).
    let boundSum = 0;
    let commonSquares = 0;
    for (let p = 0; p < dims.length; p++) {
      const list = view.postings[dims[p]];
      if (list === undefined) continue;
      const w = weights[p];
      let walked: { rows: Int32Array; values: Float32Array; length: number } = list;
      if (list.length > cap) {
        const impact = list.impact(depths[p]);
        boundSum += Math.abs(w) * impact.restMax;
        commonSquares += w * w;
        walked = impactOf(impact);
      }
      const { rows, values, length } = walked;
      if (this.touched.length < met + length) {
        const grown = new Int32Array(Math.max(met + length, 2 * this.touched.length, 256));
        grown.set(this.touched.subarray(0, met));
        this.touched = grown;
      }
      const touched = this.touched;
      for (let j = 0; j < length; j++) {
        const r = rows[j];
        if (marks[r] === 0) {
          marks[r] = 1;
          touched[met++] = r;
        }
        partial[r] += w * values[j];
      }
    }
    const commonBound = Math.min(boundSum, Math.sqrt(commonSquares));
    // The best `rescore` + 1 partial scores: the extra one bounds every tool not rescored.
    const rescore = Math.max(rescoreRows, k);
    const best = new TopK(rescore + 1, (row) => view.rowIds[row]!);
    for (let i = 0; i < met; i++) {
      const r = this.touched[i];
      const s = partial[r];
      partial[r] = 0;
      marks[r] = 0;
      if (view.rowIds[r] === undefined || !best.admits(s)) continue;
      if (keep !== undefined && !keep(r)) continue;
      best.push(s, r);
    }
    const wanted = Math.min(k, view.live);
    if (best.size < wanted) return undefined;
    const ordered = best.sorted();
    // Each float32 partial score is off the float64 sum by at most one rounding per term added
    // (each at most 2^-24 of a running sum whose terms' magnitudes add up to at most 1, rows and
    // request being unit vectors): a slack of 2^-22 a term keeps the bound an upper bound.
    const slack = (dims.length + 1) * 2 ** -22;
    const outside = (ordered.length > rescore ? Math.max(ordered[rescore][1], 0) : 0) + commonBound + slack;
    const weightOf = this.weightOf;
    for (let p = 0; p < dims.length; p++) weightOf[dims[p]] = weights[p];
    const top = this.topK(view, k);
    for (let i = 0; i < Math.min(rescore, ordered.length); i++) {
      const row = ordered[i][0];
      top.push(this.exact(view, row, weightOf), row);
    }
    for (let p = 0; p < dims.length; p++) weightOf[dims[p]] = 0;
    return { top, proven: top.size === wanted && top.worstScore > outside };
  }

  /** What a top-`k` search walks in the sparse layout (see {@link SearchCost}). */
  cost(view: SparseRowsView, plan: QueryPlan | undefined, kthScore: number): SearchCost {
    const cost: SearchCost = { lists: 0, postings: 0, rowsMet: 0, kthScore, boundSum: 0, skippablePostings: 0 };
    if (plan === undefined) return cost;
    const met = new Uint8Array(view.rowIds.length);
    const lists: Array<{ bound: number; length: number }> = [];
    for (let p = 0; p < plan.dims.length; p++) {
      const list = view.postings[plan.dims[p]];
      if (list === undefined || list.length === 0) continue;
      const bound = Math.abs(plan.weights[p]) * list.maxAbs;
      lists.push({ bound, length: list.length });
      cost.boundSum += bound;
      cost.postings += list.length;
      for (let j = 0; j < list.length; j++) met[list.rows[j]] = 1;
    }
    cost.lists = lists.length;
    for (let r = 0; r < met.length; r++) if (met[r] === 1 && view.rowIds[r] !== undefined) cost.rowsMet++;
    lists.sort((a, b) => a.bound - b.bound);
    let skipped = 0;
    for (const { bound, length } of lists) {
      if (skipped + bound >= cost.kthScore) break;
      skipped += bound;
      cost.skippablePostings += length;
    }
    return cost;
  }
}

function impactOf(top: Impact): { rows: Int32Array; values: Float32Array; length: number } {
  return { rows: top.rows, values: top.values, length: top.rows.length };
}

/**
 * How deep to walk each common list of the request (its entries in order of decreasing
 * magnitude) so that about `budget` postings are walked on them in all: every posting whose
 * contribution |weight| x |value| is at least one threshold, the same for every list (found by
 * bisection). So the postings walked are those that add most to any score, whichever term they
 * belong to. Selective lists (at most `cap` entries) get 0: they are walked whole.
 */
export function impactDepths(view: SparseRowsView, plan: QueryPlan, cap: number, budget: number): Int32Array {
  const { dims, weights } = plan;
  const depths = new Int32Array(dims.length);
  const lists: Array<{ p: number; list: Postings; weight: number }> = [];
  let high = 0;
  let total = 0;
  for (let p = 0; p < dims.length; p++) {
    const list = view.postings[dims[p]];
    if (list === undefined || list.length <= cap) continue;
    const weight = Math.abs(weights[p]);
    lists.push({ p, list, weight });
    high = Math.max(high, weight * list.maxAbs);
    total += list.length;
  }
  if (total <= budget) {
    for (const { p, list } of lists) depths[p] = list.length;
    return depths;
  }
  const walkedAt = (threshold: number, write: boolean): number => {
    let walked = 0;
    for (const { p, list, weight } of lists) {
      const n = weight > 0 ? list.depthAbove(threshold / weight) : 0;
      if (write) depths[p] = n;
      walked += n;
    }
    return walked;
  };
  let low = 0;
  // 16 halvings find the threshold to 1/65,536 of the largest contribution: close enough to the
  // budget (the walk stays within it), at two thirds of the cost of 24.
  for (let i = 0; i < 16; i++) {
    const mid = (low + high) / 2;
    if (walkedAt(mid, false) > budget) low = mid;
    else high = mid;
  }
  walkedAt(high, true);
  return depths;
}
