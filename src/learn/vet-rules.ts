/**
 * The vet's single rules: each a small pure function over one proposed text, returning `null`
 * (keep) or a {@link Refusal} with a stable machine code. `vet-lines.ts` runs them over one item
 * of each kind, `vet.ts` over a whole proposal.
 */
import type { Refusal, RefusalKind, RefusalReason } from "../ledger/schema.js";
import { tokenize } from "../text/tokenize.js";
import { type AimedPattern, findAimedAtModel } from "../text/injection.js";
import type { ProposedNotFor } from "./types.js";
import { oneLine } from "../internal.js";

/** What a refusal is about. */
export type VetKind = RefusalKind;

/** The text kept in a refusal for a proposal that held an argument value. */
export const WITHHELD_TEXT = "(withheld: holds an argument value)";

/** Whether a text holds an argument value of a recorded call (wired to value fingerprints). */
export type ContainsValue = (text: string) => boolean;

/**
 * Two example requests are equivalent when the Jaccard similarity of their token sets (stems,
 * stopwords dropped; see `text/tokenize.ts`) is at least this. 1 means "same token set".
 */
export const EQUIVALENCE_THRESHOLD = 0.8;

/** A refusal of `text` for `reason`, with the detail when there is one. */
export function refuse(kind: VetKind, text: string, reason: RefusalReason, detail?: string): Refusal {
  return detail === undefined ? { kind, text, reason } : { kind, text, reason, detail };
}

/** One non-blank line of at most `maxLineLength` characters (`empty`, `multi_line`, `too_long`). */
export function checkLine(kind: VetKind, text: string, maxLineLength: number): Refusal | null {
  if (text.trim().length === 0) return refuse(kind, text, "empty");
  if (/[\r\n\u2028\u2029\u0085\v\f]/.test(text)) return refuse(kind, text, "multi_line");
  if (text.length > maxLineLength) {
    return refuse(
      kind,
      `${text.slice(0, maxLineLength)}…`,
      "too_long",
      `${text.length} characters; at most ${maxLineLength}`,
    );
  }
  return null;
}

/** No instructions, role markers, chat-template tokens or tool-call syntax (`aimed_at_model`). */
export function checkNotAimedAtModel(kind: VetKind, text: string, extra: readonly AimedPattern[] = []): Refusal | null {
  const label = findAimedAtModel(text, { extra });
  return label === undefined ? null : refuse(kind, text, "aimed_at_model", label);
}

/** No argument value of any recorded call (`contains_value`); the refusal withholds the text. */
export function checkNoValue(kind: VetKind, text: string, containsValue: ContainsValue): Refusal | null {
  return containsValue(text) ? refuse(kind, WITHHELD_TEXT, "contains_value") : null;
}

/**
 * Cites at least `min` distinct records, each of them evidence of the right kind for this tool
 * (`no_evidence`, `below_threshold`).
 */
export function checkCitations(
  kind: VetKind,
  text: string,
  cites: readonly string[],
  isEvidence: (id: string) => boolean,
  min: number,
  what: string,
): Refusal | null {
  const distinct = [...new Set(cites)];
  if (distinct.length === 0) return refuse(kind, text, "no_evidence", `cites no ${what}`);
  const unknown = distinct.filter((id) => !isEvidence(id));
  if (unknown.length > 0) return refuse(kind, text, "no_evidence", `not a ${what} of this tool: ${unknown.join(", ")}`);
  if (distinct.length < min)
    return refuse(kind, text, "below_threshold", `cites ${distinct.length} ${what}(s); needs ${min}`);
  return null;
}

/** True when the two texts share a token (stem, stopwords dropped). */
export function shareWord(a: string, b: string): boolean {
  const left = new Set(tokenize(a));
  if (left.size === 0) return false;
  for (const t of tokenize(b)) if (left.has(t)) return true;
  return false;
}

/** Shares a word with each cited request (`no_shared_word`). */
export function checkSharedWord(
  kind: VetKind,
  text: string,
  compared: string,
  requests: readonly { id: string; request: string }[],
): Refusal | null {
  const words = new Set(tokenize(compared));
  const lacking = requests.filter((r) => !tokenize(r.request).some((t) => words.has(t))).map((r) => r.id);
  return lacking.length === 0
    ? null
    : refuse(kind, text, "no_shared_word", `shares no word with request(s) ${lacking.join(", ")}`);
}

/** The parts of a "Not for" line, or `null` when it is not of that shape. */
export interface NotForParts {
  /** The kind of request, between "Not for" and "; use". */
  phrase: string;
  /** The tool it names. */
  tool: string;
}

/**
 * Split `Not for <kind of request>; use <tool>.` into its parts. The separator before "use" may
 * be `;`, `,` or a dash; the final period is optional. `null` for any other shape.
 */
export function parseNotFor(text: string): NotForParts | null {
  const m = /^not for\s+(.+?)\s*[;,\u2014\u2013-]\s*use\s+(\S+?)\.?$/i.exec(text.trim());
  if (!m) return null;
  return { phrase: m[1], tool: m[2].replace(/^[`"'<]+|[`"'>]+$/g, "") };
}

/** Starts with "Not for", ends with "use <tool>", and names the line's `tool` (`not_for_shape`). */
export function checkNotForShape(item: ProposedNotFor): Refusal | null {
  const parts = parseNotFor(item.text);
  if (!parts) return refuse("not_for", item.text, "not_for_shape", 'expected "Not for <kind of request>; use <tool>."');
  if (parts.tool !== item.tool) {
    return refuse(
      "not_for",
      item.text,
      "not_for_shape",
      `the text names "${parts.tool}", the line is for "${item.tool}"`,
    );
  }
  return null;
}

/** Names a registered tool (`unknown_tool`) other than its own (`own_tool`). */
export function checkNamedTool(
  kind: VetKind,
  text: string,
  named: string,
  own: string,
  registered: ReadonlySet<string>,
): Refusal | null {
  if (named === own) return refuse(kind, text, "own_tool", `names ${own} itself`);
  if (!registered.has(named)) return refuse(kind, text, "unknown_tool", `"${named}" is not a registered tool`);
  return null;
}

/** Every cited request was served by the named tool (`not_served_by_named_tool`). */
export function checkServedByNamedTool(
  item: ProposedNotFor,
  confused: ReadonlyMap<string, { servedBy: string }>,
): Refusal | null {
  const others = [...new Set(item.cites)].filter((id) => confused.get(id)?.servedBy !== item.tool);
  if (others.length === 0) return null;
  const detail = others.map((id) => `${id} (served by ${confused.get(id)?.servedBy ?? "nothing"})`).join(", ");
  return refuse("not_for", item.text, "not_served_by_named_tool", detail);
}

/** At most `max` of this kind on the card, counting what this review keeps (`cap_reached`). */
export function checkCap(kind: VetKind, text: string, count: number, max: number, what: string): Refusal | null {
  return count >= max ? refuse(kind, text, "cap_reached", `${what}: ${count} of ${max}`) : null;
}

/**
 * Two texts are equivalent when the Jaccard similarity of their token sets is at least
 * `threshold` (1 = the same token set). Texts with no tokens are equivalent only when their
 * lowercased, whitespace-collapsed forms are equal.
 */
export function equivalent(a: string, b: string, threshold: number = EQUIVALENCE_THRESHOLD): boolean {
  const left = new Set(tokenize(a));
  const right = new Set(tokenize(b));
  if (left.size === 0 || right.size === 0) {
    return left.size === right.size && normalized(a) === normalized(b);
  }
  let shared = 0;
  for (const t of left) if (right.has(t)) shared += 1;
  return shared / (left.size + right.size - shared) >= threshold;
}

/**
 * Not equivalent to something already said: on the card (`already_kept`) or turned down by an
 * operator (`turned_down`).
 */
export function checkNotSaid(
  kind: VetKind,
  text: string,
  said: readonly string[],
  threshold: number,
  reason: "already_kept" | "turned_down",
): Refusal | null {
  const same = said.find((k) => equivalent(text, k, threshold));
  if (same === undefined) return null;
  return refuse(
    kind,
    text,
    reason,
    reason === "already_kept" ? `repeats "${same}"` : `an operator turned down "${same}"`,
  );
}

function normalized(text: string): string {
  return oneLine(text).toLowerCase();
}
