/**
 * The searches of the in-memory index's sparse layout: the exact inverted walk, the exhaustive
 * scan it is checked against, and the candidate pass that keeps a request from touching every
 * tool when its terms are common (see {@link FirstPassOptions} and docs/routing.md).
 */
import type { Document } from "@langchain/core/documents";
import type { SparseRows } from "./sparse-rows.js";
import type { QueryPlan } from "./sparse-vector.js";
import { ImpactRoom, Postings, type SettleScope } from "./postings.js";
import { impactDepths, wideTerms } from "./walk-plan.js";
import { nthLargest, TopK } from "./top-k.js";
import type { RowFilter } from "./filter-masks.js";
import { InvalidInput } from "../errors.js";
import { badCount, definedOnly } from "../internal.js";

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
  /**
   * A request's term on at least this share of the live rows is **wide**: a dense part's
   * dimension (a sentence encoder's, on every row) or a word on most of them.
   * @default 0.5
   */
  wideShare?: number;
  /**
   * A request with at least this many wide terms (a dense part) walks none of them in the
   * candidate pass: its candidates come from its other terms, and the wide terms are scored over
   * the candidates only (with every other term, in the exact rescoring). 0 walks them as any
   * common term.
   * @default 64
   */
  wideTerms?: number;
  /**
   * Tools scored exactly after a pass that left the wide terms out (at least `rescore`).
   * @default 768
   */
  wideRescore?: number;
}

/** The defaults applied to every {@link FirstPassOptions} field left unset. */
export const DEFAULT_FIRST_PASS: Readonly<Required<FirstPassOptions>> = Object.freeze({
  termRows: 1000,
  termShare: 0.01,
  commonPostings: 50_000,
  rescore: 512,
  postingBudget: 50_000,
  requireProof: false,
  wideShare: 0.5,
  wideTerms: 64,
  wideRescore: 768,
});

/** The counts among the options, each with the least it may be. */
const COUNT_MINIMUMS = [
  ["termRows", 0],
  ["commonPostings", 0],
  ["rescore", 1],
  ["postingBudget", 0],
  ["wideTerms", 0],
  ["wideRescore", 0],
] as const;

/** The options with defaults applied, checked (as `wordingsOptions` checks its own). @throws InvalidInput */
export function firstPassOptions(given: FirstPassOptions): Readonly<Required<FirstPassOptions>> {
  const o = { ...DEFAULT_FIRST_PASS, ...definedOnly(given) };
  const refuse = (key: keyof FirstPassOptions, rule: string) =>
    new InvalidInput(`InMemoryVectorIndex: firstPass.${key} must be ${rule}; got ${String(o[key])}.`, {
      context: { [key]: o[key] },
    });
  for (const key of ["termShare", "wideShare"] as const)
    if (!(o[key] >= 0 && o[key] <= 1)) throw refuse(key, "a share between 0 and 1");
  const bad = badCount(o, COUNT_MINIMUMS);
  if (bad) throw refuse(bad[0], `a whole number of at least ${bad[1]}`);
  if (typeof o.requireProof !== "boolean") throw refuse("requireProof", "true or false");
  return Object.freeze(o);
}

/**
 * A filtered search asking for at least this share of the live rows (k × 64 >= live) first counts
 * the rows its filter keeps; when they are at most k, every search above answers with all of them,
 * each scored exactly, so they are scored exactly and nothing else is walked. The router asks this
 * of every card of a partition whose wordings share the store (many more rows than its cards).
 */
export const FEW_KEPT_SHARE = 1 / 64;

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
  /** Searches whose filter kept at most k rows, each scored exactly (see {@link FEW_KEPT_SHARE}). */
  fewKept: number;
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
  readonly stats: SearchStats = { exact: 0, proven: 0, unproven: 0, fallbacks: 0, deepened: 0, fewKept: 0 };
  private scores = new Float64Array(0);
  /**
   * Partial scores of the candidate pass: zero everywhere between searches. Float32: they only
   * rank candidates (the rescoring is float64, as every other search), and half the bytes keep
   * more of them in cache while the walk adds to tools in no order (at 100,000 tools, 0.3-0.5 ms
   * less CPU a search in a harness run; docs/routing.md). The proof allows for their rounding.
   */
  private partial = new Float32Array(0);
  /** The candidate pass's best rows so far and their partial scores (see `bestPartials`). */
  private candRows = new Int32Array(0);
  private candValues = new Float32Array(0);
  private scratch = new Float32Array(0);
  /** The query's weight per dimension during a rescore: zero everywhere between searches. */
  private weightOf = new Float64Array(0);
  /** Where the walk merges a common list's ordered run and its short tail (see `Postings.impact`). */
  private readonly room = new ImpactRoom();
  /** The spans of the lists the candidate pass walked, read back by `bestPartials`. */
  private readonly walked = new WalkedSpans();

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

  /**
   * Orders the lists the candidate pass walks in part (those past its cap) as far as `scope`
   * asks (`Postings.settle`): the index settles `write` after every write, so that each entry is
   * copied a bounded number of times however the index grew, and `bulk` when a bulk write is
   * over (`InMemoryVectorIndex.settle`), so that the searches after it merge nothing. A short
   * tail (a write of a few rows) is left for the searches to take apart, so a small write copies
   * no list.
   */
  settle(view: SparseRowsView, scope: SettleScope): void {
    const options = this.options;
    if (options === undefined) return;
    const cap = this.cap(view, options);
    for (const list of view.postings) if (list !== undefined && list.length > cap) list.settle(scope);
  }

  private cap(view: SparseRowsView, options: Readonly<Required<FirstPassOptions>>): number {
    return Math.max(options.termRows, Math.ceil(options.termShare * view.live));
  }

  /** The default search: the candidate pass when it is on and some term is common, else the exact walk. */
  search(view: SparseRowsView, plan: QueryPlan | undefined, k: number, keep: RowFilter | undefined): TopK {
    const few = keep !== undefined && k >= FEW_KEPT_SHARE * view.live ? keptRows(view, keep, k) : undefined;
    if (few !== undefined) {
      this.stats.fewKept++;
      return this.scoreRows(view, plan, k, few);
    }
    const options = this.options;
    if (options === undefined || plan === undefined) return this.walkAll(view, plan, k, keep);
    const cap = this.cap(view, options);
    const common = plan.dims.some((d) => (view.postings[d]?.length ?? 0) > cap);
    if (!common) return this.walkAll(view, plan, k, keep);
    const wide = wideTerms(view, plan, options);
    let budget = options.commonPostings;
    let rescore = wide === undefined ? options.rescore : Math.max(options.rescore, options.wideRescore);
    for (;;) {
      const pass = this.candidates(view, plan, cap, k, keep, budget, rescore, wide);
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

  /**
   * The given rows, each scored exactly: what the exact walk, the scan and the candidate pass give
   * when the filter keeps at most k rows (every kept row is in their answer; the walk's sums and
   * the rescoring's are the same float64 sums in ascending dimension order, see `SparseRows.dot`;
   * ties ranked by id in every case).
   */
  scoreRows(view: SparseRowsView, plan: QueryPlan | undefined, k: number, rows: Int32Array): TopK {
    const top = this.topK(view, k);
    if (plan === undefined) {
      for (const row of rows) top.push(0, row);
      return top;
    }
    if (this.weightOf.length < view.dimension) this.weightOf = new Float64Array(view.dimension);
    const weightOf = this.weightOf;
    const { dims, weights } = plan;
    for (let p = 0; p < dims.length; p++) weightOf[dims[p]] = weights[p];
    for (const row of rows) top.push(this.exact(view, row, weightOf), row);
    for (let p = 0; p < dims.length; p++) weightOf[dims[p]] = 0;
    return top;
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
    wide: Uint8Array | undefined,
  ): { top: TopK; proven: boolean } | undefined {
    const depths = impactDepths(view, plan, cap, budget, wide);
    this.room.reset();
    const slots = view.rowIds.length;
    if (this.partial.length < slots) this.partial = new Float32Array(Math.max(slots, 2 * this.partial.length, 64));
    if (this.weightOf.length < view.dimension) this.weightOf = new Float64Array(view.dimension);
    const partial = this.partial;
    const { dims, weights } = plan;
    // What a common list's unwalked entries can add to a row: |weight| x the largest left out,
    // summed; and at most the length of the request's common part (rows are unit vectors).
    let boundSum = 0;
    let commonSquares = 0;
    const walked = this.walked;
    walked.reset();
    for (let p = 0; p < dims.length; p++) {
      const list = view.postings[dims[p]];
      if (list === undefined) continue;
      const w = weights[p];
      let rows = list.rows;
      let values = list.values;
      let start = 0;
      let end = list.length;
      if (wide?.[p] === 1) {
        // Not walked: scored over the candidates only; what it can add to a row left out is bounded.
        boundSum += Math.abs(w) * list.maxAbs;
        commonSquares += w * w;
        continue;
      }
      if (list.length > cap) {
        const impact = list.impact(depths[p], this.room);
        boundSum += Math.abs(w) * impact.restMax;
        commonSquares += w * w;
        ({ rows, values, start, end } = impact);
      }
      for (let j = start; j < end; j++) partial[rows[j]] += w * values[j];
      walked.push(rows, start, end);
    }
    const commonBound = Math.min(boundSum, Math.sqrt(commonSquares));
    const rescore = Math.max(rescoreRows, k);
    const best = this.bestPartials(view, walked, keep, rescore);
    const wanted = Math.min(k, view.live);
    if (best.met < wanted) return undefined;
    const slack = (dims.length + 1) * 2 ** -22;
    const outside = Math.max(best.dropped, 0) + commonBound + slack;
    const weightOf = this.weightOf;
    for (let p = 0; p < dims.length; p++) weightOf[dims[p]] = weights[p];
    const top = this.topK(view, k);
    for (let i = 0; i < best.count; i++) {
      const row = this.candRows[i];
      top.push(this.exact(view, row, weightOf), row);
    }
    for (let p = 0; p < dims.length; p++) weightOf[dims[p]] = 0;
    return { top, proven: top.size === wanted && top.worstScore > outside };
  }

  /**
   * The rows of best partial score after a walk, read back from the lists walked (so the work
   * grows with the postings walked, not the tools): each row is taken once, its partial score
   * zeroed as it is read (a row met again reads 0 and is skipped), dead rows and rows the filter
   * drops left out. Kept in `candRows` (the best `n`, ties by the order met); `dropped` is the
   * best partial score left out (-Infinity when none was), `met` the rows the filter kept. A
   * buffer of 2n + 2 is cut back to the best n whenever it fills (a quickselect), so only rows
   * above the n-th best so far are written.
   */
  private bestPartials(
    view: SparseRowsView,
    walked: WalkedSpans,
    keep: RowFilter | undefined,
    n: number,
  ): { count: number; dropped: number; met: number } {
    const size = 2 * n + 2;
    if (this.candRows.length < size) {
      this.candRows = new Int32Array(size);
      this.candValues = new Float32Array(size);
      this.scratch = new Float32Array(size);
    }
    const { partial, candRows, candValues } = this;
    const ids = view.rowIds;
    let count = 0;
    let dropped = Number.NEGATIVE_INFINITY;
    let met = 0;
    for (let w = 0; w < walked.count; w++) {
      const rows = walked.rows[w];
      for (let j = walked.starts[w], end = walked.ends[w]; j < end; j++) {
        const r = rows[j];
        const s = partial[r];
        if (s === 0) continue;
        partial[r] = 0;
        if (ids[r] === undefined || (keep !== undefined && !keep(r))) continue;
        met++;
        if (s <= dropped) continue;
        candRows[count] = r;
        candValues[count++] = s;
        if (count === size) {
          dropped = this.keepBest(count, n);
          count = n;
        }
      }
    }
    if (count > n) {
      dropped = this.keepBest(count, n);
      count = n;
    }
    return { count, dropped, met };
  }

  /** Keeps the best `n` of the first `count` candidates (ties: the first met) and returns the best left out. */
  private keepBest(count: number, n: number): number {
    const { candRows, candValues, scratch } = this;
    scratch.set(candValues.subarray(0, count));
    const cut = nthLargest(scratch, count, n);
    let kept = 0;
    for (let i = 0; i < count; i++) {
      if (candValues[i] > cut) {
        candRows[kept] = candRows[i];
        candValues[kept++] = candValues[i];
      }
    }
    for (let i = 0; i < count && kept < n; i++) {
      if (candValues[i] === cut) {
        candRows[kept] = candRows[i];
        candValues[kept++] = candValues[i];
      }
    }
    return cut;
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

/** The live rows `keep` keeps, in slot order, or undefined as soon as there are more than `k`. */
export function keptRows(view: SparseRowsView, keep: RowFilter, k: number): Int32Array | undefined {
  const ids = view.rowIds;
  const out: number[] = [];
  for (let row = 0; row < ids.length; row++) {
    if (ids[row] === undefined || !keep(row)) continue;
    if (out.length >= k) return undefined;
    out.push(row);
  }
  return Int32Array.from(out);
}

/** Spans of posting lists (`rows[start..end)` each), kept across searches so that a walk allocates nothing. */
class WalkedSpans {
  rows: Int32Array[] = [];
  starts: number[] = [];
  ends: number[] = [];
  count = 0;

  reset(): void {
    // Drop the references, so that lists replaced since are not kept alive.
    this.rows.fill(EMPTY, 0, this.count);
    this.count = 0;
  }

  push(rows: Int32Array, start: number, end: number): void {
    this.rows[this.count] = rows;
    this.starts[this.count] = start;
    this.ends[this.count++] = end;
  }
}

const EMPTY = new Int32Array(0);
