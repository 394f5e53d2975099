/**
 * Rows the package built itself (the recorder's call and turn rows, `record/rows.ts`): made only
 * from parts checked where they entered (callback events, the recorder's options), of the
 * schema's types by construction. The ledger appends them without a second schema pass, the
 * cost of which was most of a recorded call's. Every other row (`appendCalls` from an
 * application, a CLI import) is still checked against its schema.
 *
 * A row is trusted by identity (a non-enumerable field keyed by a symbol this module never
 * shares), so a copy or a row shaped the same by hand is not: nothing outside the package can
 * mark one through the public API.
 */
const BUILT: unique symbol = Symbol("tool-lessons built row");

/** Mark a row built by the package, so that the ledger appends it without re-checking it. */
export function trustBuilt<T extends object>(row: T): T {
  Object.defineProperty(row, BUILT, { value: true, enumerable: false });
  return row;
}

/** True for a row marked by {@link trustBuilt}. */
export function isBuilt(row: object): boolean {
  return Object.hasOwn(row, BUILT);
}
