/**
 * The vet: the code that decides what a proposer's suggestions may become. The model (or the
 * deterministic proposer) only proposes; every rule here is a small pure function returning
 * `null` (keep) or a {@link Refusal} with a stable machine code, and {@link vetProposal} runs them
 * all, in a fixed order, over one tool's proposal.
 *
 * The kinds of lesson a proposer writes (usage notes, "Not for" lines, example requests) go
 * through one loop: thresholds, caps and whether a line must share a word with what it cites come
 * from the lesson-kinds table (`ledger/lesson-kinds.ts`); what is particular to a kind (what it
 * may cite, a "Not for" line's shape) is stated once per kind in {@link LINE_RULES}.
 *
 * Nothing the vet refuses is stored as a lesson. A refusal keeps the proposed text for the
 * operator, except when the text holds an argument value: then the text is withheld.
 */
import { EXAMPLE_CALL_PREFIX } from "./example-call.js";
import { LESSON_KIND, LESSON_KINDS, type LessonKind, type LineKindId } from "../ledger/lesson-kinds.js";
import {
  type Example,
  type Learned,
  type Refusal,
  type RefusalKind,
  type RefusalReason,
  RefusalReasonSchema,
  type Revision,
} from "../ledger/schema.js";
import { tokenize } from "../text/tokenize.js";
import type { ToolDetection } from "./detect.js";
import { type AimedPattern, findAimedAtModel } from "../text/injection.js";
import { type GateRefusal, gateText } from "../text/gate.js";
import { allowedWords, type CitedRequest } from "../text/vocabulary.js";
import { type EvidenceLimits, evidenceLimits } from "./limits.js";
import type { Proposal, ProposedExample, ProposedNote, ProposedNotFor, TurnedDown } from "./types.js";
import { oneLine } from "../internal.js";
import { withoutExamples } from "./what-if.js";

export type { RefusalReason } from "../ledger/schema.js";
export type { TurnedDown } from "./types.js";

/** Every refusal reason, as stable machine codes (the options of `RefusalReasonSchema`). */
export const REFUSAL_REASONS: readonly RefusalReason[] = RefusalReasonSchema.options;

/** What a refusal is about. */
export type VetKind = RefusalKind;

/** The text kept in a refusal for a proposal that held an argument value. */
export const WITHHELD_TEXT = "(withheld: holds an argument value)";

/** Whether a text holds an argument value of a recorded call (wired to value fingerprints). */
export type ContainsValue = (text: string) => boolean;

/** The thresholds and caps the vet applies (the operator's stored settings). */
export type VetSettings = EvidenceLimits;

/** What the vet knows about one tool's review. */
export interface VetContext {
  /** The tool under review. */
  tool: string;
  /**
   * Texts of the tool's card whose words a lesson may use: the author's description, argument
   * names, enum values (see `cardWords`).
   * @default [tool]
   */
  card?: readonly string[];
  /** Every registered tool name. */
  registeredTools: ReadonlySet<string> | readonly string[];
  /**
   * Thresholds and caps.
   * @default DEFAULT_SETTINGS
   */
  settings?: Partial<VetSettings>;
  /** What the card has learned already: counts for the caps, texts for repeats and displacement. */
  learned: Pick<Learned, "examples" | "notes" | "notFor">;
  /** Ids of this tool's failed call records (what a note may cite). */
  failedCallIds: ReadonlySet<string>;
  /**
   * The masked error message of each failed call, and its thread: a word at least two threads'
   * errors share is template, and a note may use it.
   * @default none
   */
  failedCalls?: ReadonlyMap<string, { message: string; group: string }>;
  /** This tool's missed requests, id → masked request text (what an example may cite). */
  missedRequests: ReadonlyMap<string, string>;
  /**
   * Requests that went to this tool and another tool served, id → that tool and the masked
   * request text (what a "Not for" line may cite).
   */
  confusedRequests: ReadonlyMap<string, { servedBy: string; request: string }>;
  /** True when a text holds an argument value (keyed fingerprints of recorded values). */
  containsValue: ContainsValue;
  /**
   * What an operator turned down for this tool (the items of its dismissed and undone
   * revisions): never proposed again.
   * @default nothing
   */
  turnedDown?: TurnedDown;
  /**
   * Learned examples on the card the review's choice of the set no longer needs, least needed
   * first: at the cap, once no synthetic example is left to give way, a kept example takes the
   * slot of the next of them (recorded as displaced; undo puts it back).
   * @default none
   */
  yielding?: readonly string[];
}

/**
 * What an operator turned down in these revisions: every item of a dismissed one, and what an
 * undone one had put on the card (not the examples apply had already withdrawn).
 */
export function turnedDownOf(revisions: readonly Revision[]): TurnedDown {
  const closed = revisions.filter((r) => r.status === "dismissed" || r.status === "undone");
  return {
    notes: closed.flatMap((r) => r.notesAdded),
    examples: closed.flatMap((r) => r.queriesAdded.filter((q) => !r.queriesWithdrawn.includes(q))),
    notFor: closed.flatMap((r) => r.avoidAdded.map((n) => n.text)),
    exampleCalls: closed.flatMap((r) => (r.callExample === null ? [] : [r.callExample])),
  };
}

/** Options of the vet (set through `LessonManagerOptions.vet`). */
export interface VetOptions {
  /**
   * Patterns of text aimed at the model, checked in addition to the shared list of
   * `text/injection.ts` (on the same normalized views of the text).
   * @default []
   */
  aimedPatterns?: readonly AimedPattern[];
}

/** The defaults of {@link VetOptions}. */
export const DEFAULT_VET_OPTIONS: Readonly<Required<VetOptions>> = Object.freeze({
  aimedPatterns: [],
});

/**
 * Two example requests are equivalent when the Jaccard similarity of their token sets (stems,
 * stopwords dropped; see `text/tokenize.ts`) is at least this. 1 means "same token set".
 */
export const EQUIVALENCE_THRESHOLD = 0.8;

/** A pattern of text aimed at the model, and the label a refusal reports for it (see `text/injection.ts`). */
export type { AimedPattern } from "../text/injection.js";

// ------------------------------------------------------------------ single rules

function refuse(kind: VetKind, text: string, reason: RefusalReason, detail?: string): Refusal {
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

// ------------------------------------------------------------------ one item

function registeredSet(ctx: VetContext): ReadonlySet<string> {
  return ctx.registeredTools instanceof Set ? ctx.registeredTools : new Set(ctx.registeredTools);
}

/**
 * The rules every kind of text passes: no value, one line, not aimed at the model. The value
 * check comes first so that no refusal after it keeps a text holding a value.
 */
function checkText(
  kind: VetKind,
  text: string,
  ctx: VetContext,
  options: VetOptions,
  cited: readonly CitedRequest[] = [],
): Refusal | null {
  return (
    checkNoValue(kind, text, ctx.containsValue) ??
    checkLine(kind, text, evidenceLimits(ctx.settings).maxLineLength) ??
    gateLesson(kind, text, ctx, cited).refusal ??
    checkNotAimedAtModel(kind, text, options.aimedPatterns ?? DEFAULT_VET_OPTIONS.aimedPatterns)
  );
}

/** What the gate makes of a proposed lesson: its text as it would be kept, or why it is refused. */
export interface GatedLesson {
  /** Normalized, private data masked, only allowed words (others `<word>`). */
  text: string;
  refusal?: Refusal;
}

/**
 * A lesson through the gate (`text/gate.ts`, kind `lesson`), checked on the normalized text
 * before any rewriting: refused when it is aimed at the model, holds private data a detector
 * finds, or keeps too few allowed words; otherwise its words that are not allowed become `<word>`.
 * Allowed: the words of the tool's card, the registered tool names, the common-word vocabulary,
 * and words at least two of the cited requests share; never a fingerprinted argument value.
 */
export function gateLesson(
  kind: VetKind,
  text: string,
  ctx: Pick<VetContext, "tool" | "card" | "registeredTools" | "containsValue">,
  cited: readonly CitedRequest[] = [],
): GatedLesson {
  const allowed = allowedWords({
    card: ctx.card ?? [ctx.tool],
    toolNames: [...ctx.registeredTools],
    requests: cited,
    isValue: ctx.containsValue,
  });
  const gated = gateText(text, { kind: "lesson", allowed });
  if (gated.refused === undefined) return { text: gated.text };
  const reason = GATE_REASONS[gated.refused];
  const withheld = reason === "contains_value" || reason === "contains_private_data";
  return {
    text: gated.text,
    refusal: refuse(kind, withheld ? WITHHELD_TEXT : gated.text, reason, gated.aimed),
  };
}

/** The vet's reason for each refusal of the gate. */
const GATE_REASONS: Readonly<Record<GateRefusal, RefusalReason>> = Object.freeze({
  aimed_at_model: "aimed_at_model",
  contains_value: "contains_value",
  value_word: "contains_value",
  contains_private_data: "contains_private_data",
  unknown_word: "too_many_unknown_words",
  no_allowed_words: "no_allowed_words",
  too_many_unknown_words: "too_many_unknown_words",
});

/** The proposed item of each kind a proposer writes. */
export interface ProposedLines {
  note: ProposedNote;
  not_for: ProposedNotFor;
  example: ProposedExample;
}

/** What is particular to one kind of line: the rest (thresholds, caps, shared words) is the table's. */
interface LineRules<K extends LineKindId> {
  /**
   * The records of this tool it may cite (id → the request's text, or a failed call's masked
   * message), the group each counts in for the vocabulary rule (a thread), and what they are called.
   */
  citable(ctx: VetContext): {
    has(id: string): boolean;
    request(id: string): string;
    group?(id: string): string | undefined;
    what: string;
  };
  /** Checks of its own after the text rules, before the citations. */
  shape?(item: ProposedLines[K], ctx: VetContext): Refusal | null;
  /** Checks of its own after the citations. */
  cited?(item: ProposedLines[K], ctx: VetContext): Refusal | null;
  /** The part of the text that must share a word with each cited request. */
  compared(item: ProposedLines[K]): string;
  /** What on the card it must not repeat (what never gives way to it). */
  said(ctx: VetContext): string[];
  /** Jaccard similarity of token sets at which two texts say the same (1: the same token set). */
  repeatThreshold: number;
  /** What its cap counts, for the refusal's detail. */
  capWhat: string;
  /** The item as kept: its own fields, each citation once. */
  keep(item: ProposedLines[K]): ProposedLines[K];
}

/** The rules particular to each kind of line, in one place. */
export const LINE_RULES: { readonly [K in LineKindId]: LineRules<K> } = Object.freeze({
  note: {
    citable: (ctx) => ({
      has: (id) => ctx.failedCallIds.has(id),
      request: (id) => ctx.failedCalls?.get(id)?.message ?? "",
      group: (id) => ctx.failedCalls?.get(id)?.group,
      what: "failed call",
    }),
    compared: (item) => item.text,
    said: (ctx) => ctx.learned.notes.map((n) => n.text),
    repeatThreshold: 1,
    capWhat: "notes on the card",
    keep: (item) => ({ text: item.text, cites: [...new Set(item.cites)] }),
  },
  not_for: {
    citable: (ctx) => ({
      has: (id) => ctx.confusedRequests.has(id),
      request: (id) => ctx.confusedRequests.get(id)?.request ?? "",
      what: "confused request",
    }),
    shape: (item, ctx) =>
      checkNotForShape(item) ?? checkNamedTool("not_for", item.text, item.tool, ctx.tool, registeredSet(ctx)),
    cited: (item, ctx) => checkServedByNamedTool(item, ctx.confusedRequests),
    // The kind of request, not the tool the line names ("use refer_llu" shares "refer" with anything).
    compared: (item) => parseNotFor(item.text)?.phrase ?? item.text,
    said: (ctx) => ctx.learned.notFor.map((n) => n.text),
    repeatThreshold: 1,
    capWhat: '"Not for" lines on the card',
    keep: (item) => ({ text: item.text, tool: item.tool, cites: [...new Set(item.cites)] }),
  },
  example: {
    citable: (ctx) => ({
      has: (id) => ctx.missedRequests.has(id),
      request: (id) => ctx.missedRequests.get(id) ?? "",
      what: "missed request",
    }),
    compared: (item) => item.text,
    // Learned and unknown-source examples never give way: a repeat of one is already kept.
    said: (ctx) => ctx.learned.examples.filter((e) => e.source !== "synthetic").map((e) => e.text),
    repeatThreshold: EQUIVALENCE_THRESHOLD,
    capWhat: "new examples in this review",
    keep: (item) => ({ text: item.text, cites: [...new Set(item.cites)] }),
  },
});

/**
 * The rules of one proposed line, repeats and caps aside: no value, one line, nothing aimed at
 * the model, its kind's own checks (a "Not for" line: the shape `Not for <kind of request>; use
 * <tool>.` naming its `tool`, a registered tool other than its own), at least the kind's threshold
 * of cited records of the right kind for this tool (`minFailures` failed calls, `minMisses`
 * missed requests, `minConfusions` confused requests), its checks on what it cites (a "Not for"
 * line: all served by the named tool) and, for a kind that must, a word shared with each cited
 * request.
 */
export function vetLine<K extends LineKindId>(
  kind: K,
  item: ProposedLines[K],
  ctx: VetContext,
  options: VetOptions = {},
): Refusal | null {
  const row = LESSON_KIND[kind];
  const rules: LineRules<K> = LINE_RULES[kind];
  const citable = rules.citable(ctx);
  return (
    checkText(kind, item.text, ctx, options, citedRequests(item, citable)) ??
    rules.shape?.(item, ctx) ??
    checkCitations(
      kind,
      item.text,
      item.cites,
      citable.has,
      evidenceLimits(ctx.settings)[row.threshold],
      citable.what,
    ) ??
    rules.cited?.(item, ctx) ??
    (row.sharesWordWithCited
      ? checkSharedWord(
          kind,
          item.text,
          rules.compared(item),
          [...new Set(item.cites)].map((id) => ({ id, request: citable.request(id) })),
        )
      : null)
  );
}

/** The requests an item cites, as the vocabulary rule reads them (each its own group). */
function citedRequests(
  item: { cites: readonly string[] },
  citable: { has(id: string): boolean; request(id: string): string; group?(id: string): string | undefined },
): CitedRequest[] {
  return [...new Set(item.cites)]
    .filter((id) => citable.has(id))
    .map((id) => ({ id, text: citable.request(id), group: citable.group?.(id) ?? id }));
}

/**
 * An item with its text as the gate keeps it (see {@link gateLesson}), or its refusal. The value
 * check on the text as proposed comes first, so no refusal keeps a value; then one line.
 */
function gatedItem<K extends LineKindId>(
  kind: K,
  item: ProposedLines[K],
  ctx: VetContext,
): { item: ProposedLines[K]; refusal?: Refusal } {
  const refusal =
    checkNoValue(kind, item.text, ctx.containsValue) ??
    checkLine(kind, item.text, evidenceLimits(ctx.settings).maxLineLength);
  if (refusal) return { item, refusal };
  const gated = gateLesson(kind, item.text, ctx, citedRequests(item, LINE_RULES[kind].citable(ctx)));
  return gated.refusal ? { item, refusal: gated.refusal } : { item: { ...item, text: gated.text } };
}

/** A usage note's rules (see {@link vetLine}). */
export function vetNote(note: ProposedNote, ctx: VetContext, options: VetOptions = {}): Refusal | null {
  return vetLine("note", note, ctx, options);
}

/** An example request's rules (see {@link vetLine}). */
export function vetExample(example: ProposedExample, ctx: VetContext, options: VetOptions = {}): Refusal | null {
  return vetLine("example", example, ctx, options);
}

/** A "Not for" line's rules (see {@link vetLine}). */
export function vetNotFor(item: ProposedNotFor, ctx: VetContext, options: VetOptions = {}): Refusal | null {
  return vetLine("not_for", item, ctx, options);
}

/** The rules of the example call built by code: no value, one line, nothing aimed at the model. */
export function vetExampleCall(
  text: string,
  ctx: Pick<VetContext, "containsValue" | "settings" | "turnedDown"> &
    Partial<Pick<VetContext, "tool" | "card" | "registeredTools">>,
  options: VetOptions = {},
): Refusal | null {
  const maxLineLength = evidenceLimits(ctx.settings).maxLineLength;
  const args = text.startsWith(EXAMPLE_CALL_PREFIX) ? text.slice(EXAMPLE_CALL_PREFIX.length) : text;
  return (
    // The fixed "Example call:" prefix is ours, not the user's: only the arguments can hold a value.
    checkNoValue("example_call", args, ctx.containsValue) ??
    checkLine("example_call", text, maxLineLength) ??
    gateLesson("example_call", args, {
      tool: ctx.tool ?? "",
      card: ctx.card ?? [],
      registeredTools: ctx.registeredTools ?? [],
      containsValue: ctx.containsValue,
    }).refusal ??
    checkNotAimedAtModel("example_call", text, options.aimedPatterns ?? DEFAULT_VET_OPTIONS.aimedPatterns) ??
    checkNotSaid("example_call", text, ctx.turnedDown?.exampleCalls ?? [], 1, "turned_down")
  );
}

// ------------------------------------------------------------------ a whole proposal

/** What {@link vetProposal} decided. */
export interface VetResult {
  /** What may be applied, in the proposal's order. */
  kept: Proposal;
  /** What was refused, and why. */
  refused: Refusal[];
  /**
   * Synthetic example requests that give way to the kept learned ones (on apply they are removed;
   * undo puts them back).
   */
  displaced: string[];
}

/**
 * Vet one tool's proposal: every rule of the SPEC, per item, in this order: no value (first, so
 * no refusal keeps a value) → one line → not aimed at the model → (shape and named tool, for
 * "Not for") → cited evidence and threshold → served by the named tool → shared word → not a
 * repeat → cap → room. Notes first, then "Not for" lines, then examples.
 *
 * Caps count what the card holds plus what this review keeps: at most `maxNotes` notes and
 * `maxAvoid` "Not for" lines on the card, at most `maxNewQueries` new examples per review.
 *
 * Example displacement (real wording displaces invented wording):
 * - an example equivalent to a learned or unknown-source example on the card, or to one kept
 *   earlier in this proposal, is `already_kept`;
 * - one equivalent to a synthetic example on the card replaces it (those are placed first, so a
 *   synthetic that has an equivalent is never taken for the cap rule below);
 * - otherwise it is added while the card holds fewer than `maxQueries`; at the cap it replaces
 *   the oldest remaining synthetic example, then the next of `yielding` (learned examples the
 *   review's set no longer needs); with none left it is refused `no_room`.
 *
 * "Equivalent" is {@link equivalent} at {@link EQUIVALENCE_THRESHOLD}.
 */
export function vetProposal(proposal: Proposal, ctx: VetContext, options: VetOptions = {}): VetResult {
  const notes = vetLines("note", proposal.notes, ctx, options);
  const notFor = vetLines("not_for", proposal.notFor, ctx, options);
  const accepted = vetLines("example", proposal.examples, ctx, options);
  const examples = placeExamples(accepted.kept, ctx);
  return {
    kept: { notes: notes.kept, examples: examples.kept, notFor: notFor.kept },
    refused: [...notes.refused, ...notFor.refused, ...accepted.refused, ...examples.refused],
    displaced: examples.displaced,
  };
}

/**
 * One kind's items through its rules ({@link vetLine}), then: not a repeat of what the card holds
 * (or of one kept before it), not turned down, and within the kind's cap: the review cap when it
 * has one (`maxNewQueries`), else the card cap counting what is kept (`maxNotes`, `maxAvoid`).
 * A kind whose card cap makes room by giving way (examples) is placed afterwards.
 */
function vetLines<K extends LineKindId>(
  kind: K,
  items: readonly ProposedLines[K][],
  ctx: VetContext,
  options: VetOptions,
): { kept: ProposedLines[K][]; refused: Refusal[] } {
  const row = LESSON_KIND[kind];
  const rules: LineRules<K> = LINE_RULES[kind];
  const settings = evidenceLimits(ctx.settings);
  const said = rules.said(ctx);
  const onCard = said.length;
  const turnedDown = ctx.turnedDown?.[row.field] ?? [];
  const kept: ProposedLines[K][] = [];
  const refused: Refusal[] = [];
  for (const proposed of items) {
    const gated = gatedItem(kind, proposed, ctx);
    if (gated.refusal) {
      refused.push(gated.refusal);
      continue;
    }
    const item = gated.item;
    const cap =
      row.reviewCap !== null
        ? checkCap(kind, item.text, kept.length, settings[row.reviewCap], rules.capWhat)
        : row.atCap === "refuse"
          ? checkCap(kind, item.text, onCard + kept.length, settings[row.cap], rules.capWhat)
          : null;
    const r =
      vetLine(kind, item, ctx, options) ??
      checkNotSaid(kind, item.text, said, rules.repeatThreshold, "already_kept") ??
      checkNotSaid(kind, item.text, turnedDown, rules.repeatThreshold, "turned_down") ??
      cap;
    if (r) refused.push(r);
    else {
      kept.push(rules.keep(item));
      said.push(item.text);
    }
  }
  return { kept, refused };
}

/**
 * Room for the accepted examples on a card of at most `maxQueries`: one equivalent to a synthetic
 * example replaces it; else it is added under the cap; at the cap the oldest synthetic gives way;
 * with none left it is refused `no_room`.
 */
function placeExamples(
  accepted: readonly ProposedExample[],
  ctx: VetContext,
): { kept: ProposedExample[]; refused: Refusal[]; displaced: string[] } {
  const settings = evidenceLimits(ctx.settings);
  const threshold = EQUIVALENCE_THRESHOLD;
  const refused: Refusal[] = [];

  // Synthetic examples, oldest first; each may give way once.
  const synthetic = ctx.learned.examples
    .map((e, index) => ({ e, index }))
    .filter(({ e }) => e.source === "synthetic")
    .sort((a, b) => a.e.addedAt - b.e.addedAt || a.index - b.index)
    .map(({ e }) => e.text);
  const remaining = new Set(synthetic.map((_, i) => i));
  const onCard = new Set(ctx.learned.examples.filter((e) => e.source === "learned").map((e) => e.text));
  const yielding = [...new Set(ctx.yielding ?? [])].filter((t) => onCard.has(t));
  const displaced: string[] = [];
  const placed = new Set<number>();

  // First pass: an example equivalent to a synthetic one replaces it.
  accepted.forEach((example, i) => {
    const match = synthetic.findIndex((text, j) => remaining.has(j) && equivalent(example.text, text, threshold));
    if (match >= 0) {
      remaining.delete(match);
      displaced.push(synthetic[match]);
      placed.add(i);
    }
  });

  // Second pass: room while under the cap, else the oldest synthetic gives way, else no room.
  let count = ctx.learned.examples.length;
  const kept: ProposedExample[] = [];
  accepted.forEach((example, i) => {
    if (placed.has(i)) {
      kept.push(example);
      return;
    }
    if (count < settings.maxQueries) {
      count += 1;
      kept.push(example);
      return;
    }
    const oldest = synthetic.findIndex((_, j) => remaining.has(j));
    if (oldest >= 0) {
      remaining.delete(oldest);
      displaced.push(synthetic[oldest]);
      kept.push(example);
      return;
    }
    const learned = yielding.shift();
    if (learned !== undefined) {
      displaced.push(learned);
      kept.push(example);
      return;
    }
    refused.push(
      refuse(
        "example",
        example.text,
        "no_room",
        `${count} of ${settings.maxQueries} examples, none synthetic left to give way`,
      ),
    );
  });
  return { kept, refused, displaced };
}

// ------------------------------------------------------------------ on apply

/** What a revision adds of each kind, as texts. */
function addedTexts(
  revision: Pick<Revision, "notesAdded" | "queriesAdded" | "avoidAdded" | "callExample">,
  field: NonNullable<LessonKind["added"]>,
): string[] {
  const value = revision[field];
  if (value === null) return [];
  if (typeof value === "string") return [value];
  return value.map((v) => (typeof v === "string" ? v : v.text));
}

/**
 * The rules a proposed revision is held to again when it is applied, the ones that depend on the
 * settings: each line it adds within `maxLineLength` (`too_long`), and no more usage notes or
 * "Not for" lines on the card than their caps (`cap_reached`). The first refusal, or `null`.
 * Under the settings it was reviewed with, a revision always passes (its card cannot have changed
 * since: apply refuses that first); examples make room by giving way, so their cap is not one of
 * these.
 */
export function checkApplicable(
  revision: Pick<Revision, "notesAdded" | "queriesAdded" | "avoidAdded" | "callExample">,
  learned: Pick<Learned, "notes" | "notFor">,
  settings?: Partial<VetSettings>,
): Refusal | null {
  const limits = evidenceLimits(settings);
  for (const row of LESSON_KINDS) {
    if (row.added === null) continue;
    const texts = addedTexts(revision, row.added);
    for (const text of texts) {
      const r = checkLine(row.id, text, limits.maxLineLength);
      if (r) return r;
    }
    if (row.atCap !== "refuse") continue;
    const onCard = learned[row.field].length;
    for (let i = 0; i < texts.length; i++) {
      const r = checkCap(row.id, texts[i], onCard + i, limits[row.cap], LINE_RULES[row.id].capWhat);
      if (r) return r;
    }
  }
  return null;
}

// ------------------------------------------------------------------ helpers for the manager

/** The evidence maps of {@link VetContext} for one tool, from its detection. */
export function evidenceMaps(
  td: ToolDetection,
): Pick<VetContext, "failedCallIds" | "failedCalls" | "missedRequests" | "confusedRequests"> {
  const failedCallIds = new Set<string>();
  const failedCalls = new Map<string, { message: string; group: string }>();
  for (const f of td.failures) {
    f.callIds.forEach((id, i) => {
      failedCallIds.add(id);
      failedCalls.set(id, { message: f.errorMessage, group: f.callGroups?.[i] ?? id });
    });
  }
  const missedRequests = new Map<string, string>();
  for (const m of td.misses) missedRequests.set(m.requestId, m.request);
  const confusedRequests = new Map<string, { servedBy: string; request: string }>();
  for (const c of td.confusions) confusedRequests.set(c.requestId, { servedBy: c.servedBy, request: c.request });
  return { failedCallIds, failedCalls, missedRequests, confusedRequests };
}

/**
 * The card's examples after a vetted review is applied: the displaced ones removed (each text
 * once, a synthetic example first), the kept ones appended as `learned` with the revision id.
 */
export function mergeExamples(
  current: readonly Example[],
  kept: readonly ProposedExample[],
  displaced: readonly string[],
  revisionId: string,
  now: number,
): Example[] {
  const out: Example[] = withoutExamples(current, displaced);
  for (const k of kept) out.push({ text: k.text, source: "learned", revisionId, addedAt: now });
  return out;
}

function normalized(text: string): string {
  return oneLine(text).toLowerCase();
}
