/**
 * The stored rows of the in-memory index's sparse layout, held contiguously: every slot's nonzero
 * dimensions in one array (16-bit when the dimension allows it) and their float32 values in
 * another, slot after slot, with one offset per slot. Scoring a candidate reads one short
 * contiguous run of each instead of two small arrays of its own, which is what makes the
 * candidate pass's exact rescoring cheap (measured at 100,000 tools: 2.5 times faster than one
 * pair of typed arrays per slot; docs/routing.md), and a slot costs 6 bytes an entry plus 4, not
 * two typed-array objects.
 */

/** Largest dimension whose indexes fit the 16-bit layout. */
const U16_DIMENSION = 0x10000;

/** Every slot's nonzero entries (dimensions ascending), appended in slot order. */
export class SparseRows {
  private dims: Uint16Array | Int32Array;
  private values: Float32Array;
  /** Slot `s` holds entries `offsets[s]` to `offsets[s + 1]` (exclusive). */
  private offsets: Int32Array;
  private slots = 0;

  constructor(readonly dimension: number) {
    this.dims = dimension <= U16_DIMENSION ? new Uint16Array(1024) : new Int32Array(1024);
    this.values = new Float32Array(1024);
    this.offsets = new Int32Array(64);
  }

  /** Slots appended (dead ones included). */
  get count(): number {
    return this.slots;
  }

  /** Entries held, in all. */
  get entries(): number {
    return this.offsets[this.slots];
  }

  /** Appends a slot's entries; returns its slot number. */
  append(dims: ArrayLike<number>, values: ArrayLike<number>): number {
    const start = this.offsets[this.slots];
    const end = start + dims.length;
    if (end > this.values.length) {
      const size = Math.max(end, Math.ceil(this.values.length * 1.5));
      const grownDims = this.dims instanceof Uint16Array ? new Uint16Array(size) : new Int32Array(size);
      grownDims.set(this.dims.subarray(0, start));
      const grownValues = new Float32Array(size);
      grownValues.set(this.values.subarray(0, start));
      this.dims = grownDims;
      this.values = grownValues;
    }
    if (this.slots + 2 > this.offsets.length) {
      const grown = new Int32Array(Math.ceil(this.offsets.length * 1.5) + 2);
      grown.set(this.offsets.subarray(0, this.slots + 1));
      this.offsets = grown;
    }
    this.dims.set(dims, start);
    this.values.set(values, start);
    this.offsets[++this.slots] = end;
    return this.slots - 1;
  }

  /** A slot's dimensions (a view, not a copy). */
  dimsOf(slot: number): Uint16Array | Int32Array {
    return this.dims.subarray(this.offsets[slot], this.offsets[slot + 1]);
  }

  /** A slot's values (a view, not a copy). */
  valuesOf(slot: number): Float32Array {
    return this.values.subarray(this.offsets[slot], this.offsets[slot + 1]);
  }

  /**
   * A slot's exact score against a query's weight per dimension (zero off the query): its
   * products added in float64 in ascending dimension order. A product with a zero weight is a
   * zero, and adding it changes no bit of the sum (which is never -0: it starts at +0 and
   * +0 + -0 is +0), so the sum is the one the inverted walk adds up, without a branch per entry.
   */
  dot(slot: number, weightOf: Float64Array): number {
    const { dims, values } = this;
    const end = this.offsets[slot + 1];
    let s = 0;
    for (let j = this.offsets[slot]; j < end; j++) s += weightOf[dims[j]] * values[j];
    return s;
  }
}
