/**
 * The masking budget: the caps that bound what recording one run costs (see `values.ts` for the
 * walk they bound, `mask.ts` for the texts) and the marker of a value's unread part.
 */

/**
 * The stated cost budget of masking one run (docs/security.md, "Masking cost"): recording one
 * run never blocks the event loop for long, and its rows stay small, however large an argument or
 * a text. Past a cap, the argument is summarized (its shape, a bounded sample of fingerprints)
 * and the run's texts are masked strictly (see `oversize`). Every cap bounds work by size, so the
 * cost of one run is bounded whatever it holds; `npm run bench -- masking` measures it.
 */
export const MASK_BUDGET = Object.freeze({
  /** Nodes of one argument walked at all; past them the rest is not read and the values are `oversize`. */
  maxWalkNodes: 2_000,
  /** Characters of one value read for its terms; a longer value is read in part and `oversize`. */
  maxLeafChars: 4_096,
  /** Characters of all the values of one argument read for their terms; past them, `oversize`. */
  maxReadChars: 32_768,
  /** Characters of the texts past `maxNodes` (the bulk) read for value tokens; past them, `oversize`. */
  maxBulkChars: 20_000,
  /** Fingerprints kept per call record: the leaf-by-leaf values' first, then the bulk's (a sample). */
  maxFingerprints: 256,
  /** Arguments described per call record (name, kind, shape); the rest are counted in one last entry. */
  maxArgs: 24,
  /** Characters of an argument's name kept in its record (a longer one is cut, "…" marking the cut). */
  maxArgNameChars: 64,
  /** Characters of a tool's JSON input parsed as its arguments; a longer input is read from its start. */
  maxInputChars: 32_768,
  /** A list of at most this many arguments objects (a run's calls) is walked one budget per call. */
  maxCallsApart: 64,
  /** Characters of one free text (a request, an error) masked and checked; the rest is cut off with "…". */
  maxTextChars: 8_192,
  /**
   * Characters of one stored call row (its JSON) that the caps above, with the stored texts' own
   * (a request 2,000, an error 400, an output 400 characters), keep it under, even for text JSON
   * escapes; the app's own ids (thread, partition) aside. Checked by `test/record/budget.test.ts`.
   */
  maxCallRowChars: 20_480,
});

/**
 * What stands for the part of a value that was not read (a tool input cut at
 * {@link MASK_BUDGET}`.maxInputChars`): its shape is `…`, and the walk that meets it marks the
 * values `oversize`, so the run's texts are masked strictly.
 */
export class Unread {
  static readonly instance: Unread = Object.freeze(new Unread());
  private constructor() {}
}
