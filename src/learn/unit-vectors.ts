/**
 * Unit-length vectors for the routing "what if" (`what-if.ts`): with every vector at unit length a
 * cosine is a dot product, and a lexical request vector keeps only its nonzero entries.
 */
import { norm } from "../internal.js";

/** A vector scaled to unit length (all zeros stays all zeros), so a dot product is a cosine. */
export function unit(v: readonly number[]): Float64Array {
  const n = norm(v);
  const scale = n > 0 ? 1 / n : 1;
  // A plain loop: Float64Array.from with a map function is several times slower on long vectors.
  const out = new Float64Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i] * scale;
  return out;
}

/** The nonzero entries of a vector (lexical request vectors are mostly zeros). */
export interface SparseVector {
  index: Int32Array;
  value: Float64Array;
}

/** The nonzero entries of a unit vector, as indices and values. */
export function sparse(v: Float64Array): SparseVector {
  const index: number[] = [];
  for (let i = 0; i < v.length; i++) if (v[i] !== 0) index.push(i);
  return { index: Int32Array.from(index), value: Float64Array.from(index, (i) => v[i]) };
}

/** Best cosine of a unit request vector with any of a tool's unit vectors (as `ToolIndex.bestScore`). */
export function maxDot(a: SparseVector, vectors: readonly Float64Array[]): number {
  let best = Number.NEGATIVE_INFINITY;
  for (const b of vectors) {
    let s = 0;
    for (let i = 0; i < a.index.length; i++) s += a.value[i] * b[a.index[i]];
    if (s > best) best = s;
  }
  return best;
}
