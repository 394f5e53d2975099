/**
 * What the candidate pass of the in-memory index walks (`sparse-search.ts`): which of a
 * request's terms are wide (a dense part, scored over the candidates only) and how deep each
 * common list is walked.
 */
import type { QueryPlan } from "./sparse-vector.js";
import { type Postings, PROBES } from "./postings.js";

/** What the walk's plan reads of the index (a `SparseRowsView`): its posting lists and live rows. */
export interface ListsView {
  /** Per dimension, the slots nonzero there (dead slots included until a compaction). */
  readonly postings: ReadonlyArray<Postings | undefined>;
  /** Live slots. */
  readonly live: number;
}

/**
 * Per term of the request, 1 when it is wide (on at least `wideShare` of the live rows), when the
 * request has at least `wideTerms` of them (see `FirstPassOptions.wideTerms`); else undefined.
 */
export function wideTerms(
  view: ListsView,
  plan: QueryPlan,
  options: { readonly wideShare: number; readonly wideTerms: number },
): Uint8Array | undefined {
  if (!(options.wideTerms > 0) || plan.dims.length < options.wideTerms) return undefined;
  const floor = options.wideShare * view.live;
  const isWide = (p: number): boolean => {
    const length = view.postings[plan.dims[p]]?.length ?? 0;
    return length > 0 && length >= floor;
  };
  // Counted first: a lexical request (a few wide terms at most) allocates nothing.
  let count = 0;
  for (let p = 0; p < plan.dims.length; p++) if (isWide(p)) count++;
  if (count < options.wideTerms) return undefined;
  const wide = new Uint8Array(plan.dims.length);
  for (let p = 0; p < plan.dims.length; p++) if (isWide(p)) wide[p] = 1;
  return wide;
}

/**
 * How deep to walk each common list of the request (its entries in order of decreasing
 * magnitude) so that about `budget` postings are walked on them in all: every posting whose
 * contribution |weight| x |value| is at least one threshold, the same for every list. So the
 * postings walked are those that add most to any score, whichever term they belong to.
 * Selective lists (at most `cap` entries) get 0: they are walked whole.
 *
 * The threshold is found by bisection on a small table per list (its contributions at
 * {@link PROBES}, read once), the depth between two probes taken by linear interpolation; the
 * depths at that threshold are then exact (a binary search a list). Probing each list at every
 * step of the bisection cost more than the rest of the pass's bookkeeping (docs/routing.md).
 */
export function impactDepths(
  view: ListsView,
  plan: QueryPlan,
  cap: number,
  budget: number,
  wide?: Uint8Array,
): Int32Array {
  const { dims, weights } = plan;
  const depths = new Int32Array(dims.length);
  const common: number[] = [];
  let total = 0;
  for (let p = 0; p < dims.length; p++) {
    const list = view.postings[dims[p]];
    if (list === undefined || list.length <= cap || wide?.[p] === 1) continue;
    common.push(p);
    total += list.length;
  }
  if (total <= budget) {
    for (const p of common) depths[p] = view.postings[dims[p]]!.length;
    return depths;
  }
  // Per list: its contribution at each probe depth it reaches, then the next (0 past its end).
  const width = PROBES.length + 1;
  const table = new Float64Array(common.length * width);
  const lengths = new Int32Array(common.length);
  const counts = new Int32Array(common.length);
  let high = 0;
  common.forEach((p, i) => {
    const list = view.postings[dims[p]]!;
    const weight = Math.abs(weights[p]);
    const probes = list.probes();
    lengths[i] = list.length;
    counts[i] = probes.length;
    for (let q = 0; q < probes.length; q++) table[i * width + q] = weight * probes[q];
    high = Math.max(high, table[i * width]);
  });
  // About how many postings of the common lists contribute at least `threshold`.
  const approxWalked = (threshold: number): number => {
    let walked = 0;
    for (let i = 0; i < common.length; i++) {
      const row = i * width;
      // The first probe below the threshold (the row is non-increasing, 0 past the list's end).
      let q = 0;
      let end = counts[i];
      while (q < end) {
        const mid = (q + end) >> 1;
        if (table[row + mid] >= threshold) q = mid + 1;
        else end = mid;
      }
      if (q === 0) continue;
      // Probes q - 1 reaches the threshold, probe q (or the list's end) does not.
      const from = PROBES[q - 1];
      const to = Math.min(q < PROBES.length ? PROBES[q] : lengths[i], lengths[i]);
      const a = table[row + q - 1];
      const b = table[row + q];
      walked += from + 1 + (a > b ? ((to - from - 1) * (a - threshold)) / (a - b) : 0);
    }
    return walked;
  };
  // On the threshold's logarithm: 12 halvings of 2^-30..1 of the largest contribution find it to 0.5%.
  let low = high * 2 ** -30;
  for (let i = 0; i < 12; i++) {
    const mid = Math.sqrt(low * high);
    if (approxWalked(mid) > budget) low = mid;
    else high = mid;
  }
  for (const p of common) {
    const weight = Math.abs(weights[p]);
    depths[p] = weight > 0 ? view.postings[dims[p]]!.depthAbove(high / weight) : 0;
  }
  return depths;
}
