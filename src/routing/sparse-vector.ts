/**
 * Sparse vectors: a vector's nonzero entries by ascending index. The package's own lexical
 * embeddings are nonzero on a few hundred of thousands of dimensions, so cards and requests are
 * held and mixed this way end to end; the arithmetic below is the dense arithmetic of
 * `tool-index.ts` and `memory-vector-store.ts` restricted to the nonzero entries, summed in the
 * same (ascending) order, so it gives the same numbers to the bit (adding a zero product changes
 * no bit of a sum).
 */
import { InvalidInput } from "../errors.js";

/** A vector given by its nonzero entries. */
export interface SparseVector {
  /** Length of the dense vector it stands for. */
  readonly dimension: number;
  /** Indexes of the nonzero entries, strictly ascending. */
  readonly index: Int32Array;
  /** Their values, one per index. */
  readonly value: Float32Array | Float64Array;
}

/** True for a {@link SparseVector} (as opposed to a dense `number[]`). */
export function isSparse(v: unknown): v is SparseVector {
  return typeof v === "object" && v !== null && !Array.isArray(v) && (v as SparseVector).index instanceof Int32Array;
}

/** The nonzero entries of a dense vector. */
export function sparseOf(dense: ArrayLike<number>): SparseVector {
  const index: number[] = [];
  const value: number[] = [];
  for (let d = 0; d < dense.length; d++) {
    if (dense[d] !== 0) {
      index.push(d);
      value.push(dense[d]);
    }
  }
  return { dimension: dense.length, index: Int32Array.from(index), value: Float64Array.from(value) };
}

/** The dense `number[]` a sparse vector stands for. */
/**
 * A typed vector as a plain `number[]`, copied by index: `Array.from` of a typed array goes through
 * its iterator, an allocation per entry (a route copies several vectors of hundreds of entries).
 */
export function numbersOf(v: ArrayLike<number>): number[] {
  const out = new Array<number>(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i];
  return out;
}

export function denseOf(v: SparseVector): number[] {
  const out = new Array<number>(v.dimension).fill(0);
  for (let j = 0; j < v.index.length; j++) out[v.index[j]] = v.value[j];
  return out;
}

/** Euclidean length, summed in ascending index order (as `norm` of the dense vector). */
export function sparseNorm(v: SparseVector): number {
  let s = 0;
  for (let j = 0; j < v.value.length; j++) s += v.value[j] * v.value[j];
  return Math.sqrt(s);
}

/** `v` at unit length; `v` itself when it is already (within rounding) or is zero (as `unit` of tool-index.ts). */
export function sparseUnit(v: SparseVector): SparseVector {
  const n = sparseNorm(v);
  if (n === 0 || Math.abs(n - 1) < 1e-9) return v;
  const value = new Float64Array(v.value.length);
  for (let j = 0; j < value.length; j++) value[j] = v.value[j] / n;
  return { dimension: v.dimension, index: v.index, value };
}

/** `unit(a) + weight × unit(b)`, at unit length (as `mix` of tool-index.ts, on the union of the entries). */
export function sparseMix(a: SparseVector, b: SparseVector, weight: number): SparseVector {
  if (a.dimension !== b.dimension) {
    throw new InvalidInput(`Cannot mix vectors of lengths ${a.dimension} and ${b.dimension}.`, {
      context: { a: a.dimension, b: b.dimension },
    });
  }
  const na = sparseNorm(a) || 1;
  const nb = sparseNorm(b) || 1;
  const index = new Int32Array(a.index.length + b.index.length);
  const value = new Float64Array(index.length);
  let i = 0;
  let j = 0;
  let n = 0;
  let s = 0;
  while (i < a.index.length || j < b.index.length) {
    const da = i < a.index.length ? a.index[i] : Number.POSITIVE_INFINITY;
    const db = j < b.index.length ? b.index[j] : Number.POSITIVE_INFINITY;
    const d = Math.min(da, db);
    const x = (da === d ? a.value[i++] : 0) / na + (weight * (db === d ? b.value[j++] : 0)) / nb;
    index[n] = d;
    value[n++] = x;
    s += x * x;
  }
  const length = Math.sqrt(s) || 1;
  for (let m = 0; m < n; m++) value[m] /= length;
  return { dimension: a.dimension, index: index.slice(0, n), value: value.slice(0, n) };
}

/**
 * The active dimensions of a query, ascending, with their weights (the query's entries over its
 * length). Every search of the in-memory index scores a row as one float64 sum of
 * `weight × value` over these dimensions, added in ascending order: their scores agree exactly,
 * whatever rows a search reads.
 */
export interface QueryPlan {
  dims: Int32Array;
  weights: Float64Array;
}

/** The plan of a dense query, or undefined for an all-zero or non-finite query (every score is 0). */
export function planDense(query: readonly number[]): QueryPlan | undefined {
  let s = 0;
  for (let d = 0; d < query.length; d++) s += query[d] * query[d];
  if (!(s > 0) || !Number.isFinite(s)) return undefined;
  const inv = 1 / Math.sqrt(s);
  const active: number[] = [];
  for (let d = 0; d < query.length; d++) if (query[d] !== 0) active.push(d);
  const dims = Int32Array.from(active);
  const weights = new Float64Array(dims.length);
  for (let i = 0; i < dims.length; i++) weights[i] = query[dims[i]] * inv;
  return { dims, weights };
}

/** The plan of a sparse query: {@link planDense} of the vector it stands for, without reading its zeros. */
export function planSparse(query: SparseVector): QueryPlan | undefined {
  let sum = 0;
  for (let j = 0; j < query.value.length; j++) sum += query.value[j] * query.value[j];
  if (!(sum > 0) || !Number.isFinite(sum)) return undefined;
  const inv = 1 / Math.sqrt(sum);
  const active: number[] = [];
  for (let j = 0; j < query.index.length; j++) if (query.value[j] !== 0) active.push(j);
  const dims = new Int32Array(active.length);
  const weights = new Float64Array(active.length);
  active.forEach((j, i) => {
    dims[i] = query.index[j];
    weights[i] = query.value[j] * inv;
  });
  return { dims, weights };
}

/**
 * The float32 entries a stored row keeps for a vector: unit length (`x × (1 / length)`, rounded to
 * float32, as the dense layout stores it), zeros dropped.
 */
export function storedEntries(v: SparseVector): { dims: Int32Array; values: Float32Array } {
  let s = 0;
  for (let j = 0; j < v.value.length; j++) s += v.value[j] * v.value[j];
  const inv = s > 0 && Number.isFinite(s) ? 1 / Math.sqrt(s) : 0;
  const dims: number[] = [];
  const values: number[] = [];
  for (let j = 0; j < v.index.length; j++) {
    const x = Math.fround(v.value[j] * inv);
    if (x !== 0) {
      dims.push(v.index[j]);
      values.push(x);
    }
  }
  return { dims: Int32Array.from(dims), values: Float32Array.from(values) };
}

/**
 * @throws InvalidInput unless `v` is a sparse vector of this dimension: indexes integers in
 * range and strictly ascending, one finite value each.
 */
export function checkSparse(v: SparseVector, dimension: number): void {
  const bad = (why: string) =>
    new InvalidInput(`Sparse vector ${why}; build it with the embeddings that built the index.`, {
      context: { dimension: v.dimension, expected: dimension },
    });
  if (v.dimension !== dimension) throw bad(`of length ${v.dimension} does not match the index dimension ${dimension}`);
  if (v.index.length !== v.value.length) throw bad("has not one value per index");
  for (let j = 0; j < v.index.length; j++) {
    if (v.index[j] < 0 || v.index[j] >= dimension || (j > 0 && v.index[j] <= v.index[j - 1])) {
      throw bad("has indexes out of range or not strictly ascending");
    }
    if (!Number.isFinite(v.value[j])) throw bad("has a value that is not a finite number");
  }
}
