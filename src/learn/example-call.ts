/**
 * The example call: one line showing the shape of a call that works, built by code alone from
 * the masked shapes of successful calls. It never holds a value: only argument names, masked
 * formats (`CW-######`) and placeholders (`<text>`, `<number>`).
 */
import type { ArgShape, CallRecord } from "../ledger/schema.js";

/**
 * What a shared format may keep fixed (see {@link isSharedFormat}). Constants, not options: no
 * caller ever set them, and the masker they mirror has no option either.
 */
const SHARED_FORMAT = Object.freeze({
  /** Most letters kept as a fixed prefix (`CW` in `CW-######`): a longer run is likelier a value. */
  maxPrefixLetters: 4,
  /** Most letters of an all upper-case prefix (`CLAIM` in `CLAIM-####`), as the masker keeps them. */
  maxUpperPrefixLetters: 6,
  /** Most fixed characters (prefix letters and separators together). */
  maxFixedChars: 8,
  /** The characters the masker writes for a masked character (`#` a digit, `*` a letter of a value). */
  maskChars: "#*",
});

/** The label the line starts with. */
export const EXAMPLE_CALL_PREFIX = "Example call: ";

const PLACEHOLDER_BY_KIND: Record<ArgShape["kind"], string> = {
  string: "<text>",
  number: "<number>",
  boolean: "<boolean>",
  null: "<null>",
  array: "<list>",
  // Not "<object>": that is an HTML tag, and a lesson must never read as markup to a model.
  object: "<record>",
};

/**
 * Build the example call of a tool, e.g. `Example call: {"claim_ref": "CW-######", "file_mb": "<number>"}`.
 *
 * - Only for a tool whose calls keep being refused: `null` unless `refusedCount >= minFailures`
 *   and there is at least one successful call.
 * - Arguments: those every successful call passed, in the order of the first one (an argument
 *   some calls left out is optional; leaving it out keeps the example a call that works).
 * - A string argument is shown as its masked format only when every successful call has the same
 *   masked form, it masks something, and little of it is fixed: at most a short letter prefix
 *   and separators (see {@link isSharedFormat}). A placeholder shape the masker wrote
 *   (`<email>`) is shown as is when all calls share it. Anything else is `<text>`.
 * - Other kinds are placeholders: `<number>`, `<boolean>`, `<list>`, `<record>`, `<null>`
 *   (`<value>` when the calls disagree on the kind).
 */
export function buildExampleCall(
  successes: readonly CallRecord[],
  refusedCount: number,
  minFailures: number,
): string | null {
  if (refusedCount < minFailures || successes.length === 0) return null;

  const first = successes[0];
  const names = uniqueNames(first.args).filter((name) =>
    successes.every((call) => call.args.some((a) => a.name === name)),
  );
  if (names.length === 0) return null;

  const entries: string[] = [];
  for (const name of names) {
    const shapes = successes.map((call) => call.args.find((a) => a.name === name) as ArgShape);
    entries.push(`${JSON.stringify(name)}: ${JSON.stringify(displayShape(shapes))}`);
  }
  return `${EXAMPLE_CALL_PREFIX}{${entries.join(", ")}}`;
}

function displayShape(shapes: readonly ArgShape[]): string {
  const kind = shapes[0].kind;
  if (!shapes.every((s) => s.kind === kind)) return "<value>";
  if (kind !== "string") return PLACEHOLDER_BY_KIND[kind];
  const shape = shapes[0].shape;
  if (!shapes.every((s) => s.shape === shape)) return PLACEHOLDER_BY_KIND.string;
  if (isPlaceholder(shape) || isSharedFormat(shape)) return shape;
  return PLACEHOLDER_BY_KIND.string;
}

/** A masker placeholder such as `<email>` or `<url>`: angle brackets around a lowercase word. */
function isPlaceholder(shape: string): boolean {
  return /^<[a-z][a-z_]{0,19}>$/.test(shape);
}

/**
 * True when a masked string is a format worth showing ("little of it is fixed"): it masks at
 * least one character; it keeps letters only as a leading prefix of at most `maxPrefixLetters`
 * (`maxUpperPrefixLetters` when upper case); everything else is masked or a separator
 * (`-` `/` `:` `.` `_` `+` `(` `)` space); and prefix and separators together are at most
 * `maxFixedChars`.
 *
 * @example isSharedFormat("CW-######") // true
 * @example isSharedFormat("####-##-##") // true
 * @example isSharedFormat("Dear Sarah ##") // false
 */
export function isSharedFormat(shape: string): boolean {
  let i = 0;
  while (i < shape.length && /[A-Za-z]/.test(shape[i])) i += 1;
  const prefix = i;
  const upper = shape.slice(0, prefix) === shape.slice(0, prefix).toUpperCase();
  if (
    prefix >
    (upper
      ? Math.max(SHARED_FORMAT.maxPrefixLetters, SHARED_FORMAT.maxUpperPrefixLetters)
      : SHARED_FORMAT.maxPrefixLetters)
  )
    return false;
  let masked = 0;
  let separators = 0;
  for (; i < shape.length; i++) {
    const ch = shape[i];
    if (SHARED_FORMAT.maskChars.includes(ch)) masked += 1;
    else if (/[-/:._+() ]/.test(ch)) separators += 1;
    else return false;
  }
  const fixed = prefix + separators;
  return masked > 0 && fixed <= SHARED_FORMAT.maxFixedChars;
}

function uniqueNames(args: readonly ArgShape[]): string[] {
  return [...new Set(args.map((a) => a.name))];
}
