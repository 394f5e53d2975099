/**
 * The dense layout of the in-memory index (`memory-vector-store.ts`): every row's entries in one
 * column-major `Float32Array`, so a query adds one column per nonzero dimension of its own.
 */
import type { QueryPlan, SparseVector } from "./sparse-vector.js";
import { scoreColumns } from "./top-k.js";

/** Rows' values by column: dimension `d` of row `r` at `d * capacity + r`. */
export class DenseColumns {
  private data = new Float32Array(0);
  private capacity: number;
  private dimension = 0;
  /** Scores, one per row (reused by every search). */
  private scores = new Float64Array(0);

  constructor(private readonly initialCapacity: number) {
    this.capacity = initialCapacity;
  }

  /** Empty columns of `dimension`, with room for `rows` rows (the initial capacity, doubled until it fits). */
  reset(dimension: number, rows = 0): void {
    this.dimension = dimension;
    this.capacity = this.initialCapacity;
    while (this.capacity < rows) this.capacity *= 2;
    this.data = new Float32Array(this.capacity * dimension);
  }

  /** Room for row `rows - 1`: the capacity doubles when full, each column copied over. */
  ensure(rows: number): void {
    if (rows <= this.capacity) return;
    const old = this.data;
    const oldCapacity = this.capacity;
    const capacity = oldCapacity * 2;
    const data = new Float32Array(capacity * this.dimension);
    for (let d = 0; d < this.dimension; d++) {
      data.set(old.subarray(d * oldCapacity, d * oldCapacity + oldCapacity), d * capacity);
    }
    this.data = data;
    this.capacity = capacity;
  }

  /** Writes a row as the unit vector of `vector` (zero when it has no length). */
  write(row: number, vector: SparseVector): void {
    let s = 0;
    for (let j = 0; j < vector.value.length; j++) s += vector.value[j] * vector.value[j];
    const inv = s > 0 && Number.isFinite(s) ? 1 / Math.sqrt(s) : 0;
    const { data, capacity } = this;
    for (let d = 0; d < this.dimension; d++) data[d * capacity + row] = 0;
    for (let j = 0; j < vector.index.length; j++) data[vector.index[j] * capacity + row] = vector.value[j] * inv;
  }

  /** Sets a zero row's entries as they are (already unit: a sparse slot moved in). */
  set(row: number, dims: ArrayLike<number>, values: ArrayLike<number>): void {
    for (let j = 0; j < dims.length; j++) this.data[dims[j] * this.capacity + row] = values[j];
  }

  /** Copies row `from` over row `to` (a delete moves the last row into the freed one). */
  move(from: number, to: number): void {
    const { data, capacity } = this;
    for (let d = 0; d < this.dimension; d++) data[d * capacity + to] = data[d * capacity + from];
  }

  /** A row's values. */
  get(row: number): number[] {
    const out = new Array<number>(this.dimension);
    for (let d = 0; d < this.dimension; d++) out[d] = this.data[d * this.capacity + row];
    return out;
  }

  /** Cosine of the query with each of the first `rows` rows (the first `rows` entries of the buffer returned). */
  score(rows: number, plan: QueryPlan | undefined): Float64Array {
    if (this.scores.length < rows) this.scores = new Float64Array(Math.max(rows, 2 * this.scores.length, 64));
    else this.scores.fill(0, 0, rows);
    if (plan !== undefined) scoreColumns(this.data, this.capacity, rows, plan, this.scores);
    return this.scores;
  }
}
