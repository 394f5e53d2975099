/**
 * The vet: the code that decides what a proposer's suggestions may become. The model (or the
 * deterministic proposer) only proposes; every rule here is a small pure function returning
 * `null` (keep) or a {@link Refusal} with a stable machine code, and {@link vetProposal} runs them
 * all, in a fixed order, over one tool's proposal.
 *
 * Nothing the vet refuses is stored as a lesson. A refusal keeps the proposed text for the
 * operator, except when the text holds an argument value: then the text is withheld.
 */
import { EXAMPLE_CALL_PREFIX } from "./example-call.js";
import type { Example, Learned, Refusal, Revision } from "../ledger/schema.js";
import { DEFAULT_SETTINGS } from "../settings.js";
import { tokenize } from "../text/tokenize.js";
import type { ToolDetection } from "./detect.js";
import { findAimedAtModel } from "../text/injection.js";
import type { EvidenceLimits, Proposal, ProposedExample, ProposedNote, ProposedNotFor } from "./proposer.js";
import { oneLine } from "../internal.js";

/** Every reason the vet gives, as stable machine codes. */
export const REFUSAL_REASONS = [
  /** Cites nothing, or cites a record that is not evidence of the right kind for this tool. */
  "no_evidence",
  /** Cites fewer records than the evidence threshold (`minFailures`, `minMisses`, `minConfusions`). */
  "below_threshold",
  /** Shares no word (stem) with one of the requests it cites. */
  "no_shared_word",
  /** Holds an argument value of a recorded call (id, name, amount, email …). */
  "contains_value",
  /** Holds text aimed at the model: instructions, role markers, chat-template tokens, tool-call syntax. */
  "aimed_at_model",
  /** Blank. */
  "empty",
  /** Longer than `maxLineLength`. */
  "too_long",
  /** More than one line. */
  "multi_line",
  /** The card already has as many as the cap allows (`maxNotes`, `maxAvoid`), or the review added `maxNewQueries`. */
  "cap_reached",
  /** A "Not for" line not of the shape "Not for <kind of request>; use <tool>." naming its `tool`. */
  "not_for_shape",
  /** Names a tool that is not registered. */
  "unknown_tool",
  /** A "Not for" line that names the tool it is written on. */
  "own_tool",
  /** A "Not for" line citing a request the tool it names did not serve. */
  "not_served_by_named_tool",
  /** An example request at the cap with no synthetic example left to give way. */
  "no_room",
  /** Says what the card (or another item of the same proposal) already says. */
  "already_kept",
  /** Says what an operator already turned down for this tool: a dismissed or undone revision held it. */
  "turned_down",
] as const;

/** A reason the vet gives (see {@link REFUSAL_REASONS}). */
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** What a refusal is about. */
export type VetKind = Refusal["kind"];

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
}

/** Lessons an operator turned down for one tool, by kind (see {@link turnedDownOf}). */
export interface TurnedDown {
  notes: readonly string[];
  examples: readonly string[];
  notFor: readonly string[];
  exampleCalls: readonly string[];
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

/** Options of the vet. */
export interface VetOptions {
  /**
   * Patterns of text aimed at the model, checked in addition to the shared list of
   * `learn/injection.ts` and {@link EXTRA_AIMED_AT_MODEL}.
   * @default []
   */
  aimedPatterns?: readonly AimedPattern[];
  /**
   * Two example requests are equivalent when the Jaccard similarity of their token sets (stems,
   * stopwords dropped; see `index/tokenize.ts`) is at least this. 1 means "same token set".
   * @default 0.8
   */
  equivalenceThreshold?: number;
}

/** The defaults of {@link VetOptions}. */
export const DEFAULT_VET_OPTIONS: Required<VetOptions> = Object.freeze({
  aimedPatterns: [],
  equivalenceThreshold: 0.8,
});

/** One pattern of text aimed at the model, and the label a refusal reports for it. */
export interface AimedPattern {
  readonly label: string;
  readonly pattern: RegExp;
}

/**
 * Markers checked on top of the shared list in `learn/injection.ts`: a lesson is one line, so role
 * markers are looked for anywhere in it, not only at a line start. Extend here (or per call with
 * `VetOptions.aimedPatterns`).
 */
export const EXTRA_AIMED_AT_MODEL: readonly AimedPattern[] = [
  { label: "role_marker", pattern: /\b(system|assistant|developer)\s*:/i },
  { label: "command_to_model", pattern: /\byou\s+(must|should|will)\s+now\b|\bdo anything now\b/i },
  { label: "chat_template_token", pattern: /<\|[^|>\s]{1,30}\|>|<\/?(im_start|im_end|endoftext)\b/i },
  {
    label: "tool_call_syntax",
    pattern: /<\/?(function|tool|tool_result|function_results|antml:[a-z_]+)\b[^>]*>|<function\b/i,
  },
];

/** The label of the first marker of text aimed at the model found in `text`, or `undefined`. */
export function findTextAimedAtModel(text: string, extra: readonly AimedPattern[] = []): string | undefined {
  const shared = findAimedAtModel(text);
  if (shared !== undefined) return shared;
  for (const { label, pattern } of [...EXTRA_AIMED_AT_MODEL, ...extra]) if (pattern.test(text)) return label;
  return undefined;
}

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
  const label = findTextAimedAtModel(text, extra);
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
export function equivalent(
  a: string,
  b: string,
  threshold: number = DEFAULT_VET_OPTIONS.equivalenceThreshold,
): boolean {
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

function settingsOf(ctx: VetContext): VetSettings {
  const s = ctx.settings ?? {};
  return {
    minFailures: s.minFailures ?? DEFAULT_SETTINGS.minFailures,
    minMisses: s.minMisses ?? DEFAULT_SETTINGS.minMisses,
    minConfusions: s.minConfusions ?? DEFAULT_SETTINGS.minConfusions,
    maxNotes: s.maxNotes ?? DEFAULT_SETTINGS.maxNotes,
    maxQueries: s.maxQueries ?? DEFAULT_SETTINGS.maxQueries,
    maxNewQueries: s.maxNewQueries ?? DEFAULT_SETTINGS.maxNewQueries,
    maxAvoid: s.maxAvoid ?? DEFAULT_SETTINGS.maxAvoid,
    maxLineLength: s.maxLineLength ?? DEFAULT_SETTINGS.maxLineLength,
  };
}

function registeredSet(ctx: VetContext): ReadonlySet<string> {
  return ctx.registeredTools instanceof Set ? ctx.registeredTools : new Set(ctx.registeredTools);
}

/**
 * The rules every kind of text passes: no value, one line, not aimed at the model. The value
 * check comes first so that no refusal after it keeps a text holding a value.
 */
function checkText(kind: VetKind, text: string, ctx: VetContext, options: VetOptions): Refusal | null {
  return (
    checkNoValue(kind, text, ctx.containsValue) ??
    checkLine(kind, text, settingsOf(ctx).maxLineLength) ??
    checkNotAimedAtModel(kind, text, options.aimedPatterns ?? [])
  );
}

/**
 * The rules of one usage note, caps and repeats aside: no value, one line, nothing aimed at the
 * model, and at least `minFailures` cited failed calls of this tool.
 */
export function vetNote(note: ProposedNote, ctx: VetContext, options: VetOptions = {}): Refusal | null {
  return (
    checkText("note", note.text, ctx, options) ??
    checkCitations(
      "note",
      note.text,
      note.cites,
      (id) => ctx.failedCallIds.has(id),
      settingsOf(ctx).minFailures,
      "failed call",
    )
  );
}

/**
 * The rules of one example request, caps, repeats and room aside: no value, one line, nothing
 * aimed at the model, at least `minMisses` cited missed requests of this tool, and a word shared
 * with each of them.
 */
export function vetExample(example: ProposedExample, ctx: VetContext, options: VetOptions = {}): Refusal | null {
  return (
    checkText("example", example.text, ctx, options) ??
    checkCitations(
      "example",
      example.text,
      example.cites,
      (id) => ctx.missedRequests.has(id),
      settingsOf(ctx).minMisses,
      "missed request",
    ) ??
    checkSharedWord(
      "example",
      example.text,
      example.text,
      [...new Set(example.cites)].map((id) => ({ id, request: ctx.missedRequests.get(id) ?? "" })),
    )
  );
}

/**
 * The rules of one "Not for" line, caps and repeats aside: no value, one line, nothing aimed at
 * the model, the shape `Not for <kind of request>; use <tool>.` naming its `tool`, a registered
 * tool other than its own, at least `minConfusions` cited requests that went to this tool, all
 * served by the named tool, and a word of the "kind of request" shared with each.
 */
export function vetNotFor(item: ProposedNotFor, ctx: VetContext, options: VetOptions = {}): Refusal | null {
  const early =
    checkText("not_for", item.text, ctx, options) ??
    checkNotForShape(item) ??
    checkNamedTool("not_for", item.text, item.tool, ctx.tool, registeredSet(ctx)) ??
    checkCitations(
      "not_for",
      item.text,
      item.cites,
      (id) => ctx.confusedRequests.has(id),
      settingsOf(ctx).minConfusions,
      "confused request",
    ) ??
    checkServedByNamedTool(item, ctx.confusedRequests);
  if (early) return early;
  const phrase = parseNotFor(item.text)?.phrase ?? item.text;
  return checkSharedWord(
    "not_for",
    item.text,
    phrase,
    [...new Set(item.cites)].map((id) => ({ id, request: ctx.confusedRequests.get(id)?.request ?? "" })),
  );
}

/** The rules of the example call built by code: no value, one line, nothing aimed at the model. */
export function vetExampleCall(
  text: string,
  ctx: Pick<VetContext, "containsValue" | "settings" | "turnedDown">,
  options: VetOptions = {},
): Refusal | null {
  const maxLineLength = ctx.settings?.maxLineLength ?? DEFAULT_SETTINGS.maxLineLength;
  return (
    // The fixed "Example call:" prefix is ours, not the user's: only the arguments can hold a value.
    checkNoValue(
      "example_call",
      text.startsWith(EXAMPLE_CALL_PREFIX) ? text.slice(EXAMPLE_CALL_PREFIX.length) : text,
      ctx.containsValue,
    ) ??
    checkLine("example_call", text, maxLineLength) ??
    checkNotAimedAtModel("example_call", text, options.aimedPatterns ?? []) ??
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
 * repeat → cap → room.
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
 *   the oldest remaining synthetic example; with none left it is refused `no_room`.
 *
 * "Equivalent" is {@link equivalent} with `options.equivalenceThreshold`.
 */
export function vetProposal(proposal: Proposal, ctx: VetContext, options: VetOptions = {}): VetResult {
  const settings = settingsOf(ctx);
  const threshold = options.equivalenceThreshold ?? DEFAULT_VET_OPTIONS.equivalenceThreshold;
  const refused: Refusal[] = [];
  const kept: Proposal = { notes: [], examples: [], notFor: [] };

  const keptNoteTexts = ctx.learned.notes.map((n) => n.text);
  for (const note of proposal.notes) {
    const r =
      vetNote(note, ctx, options) ??
      checkNotSaid("note", note.text, keptNoteTexts, 1, "already_kept") ??
      checkNotSaid("note", note.text, ctx.turnedDown?.notes ?? [], 1, "turned_down") ??
      checkCap("note", note.text, keptNoteTexts.length, settings.maxNotes, "notes on the card");
    if (r) refused.push(r);
    else {
      kept.notes.push({ text: note.text, cites: [...new Set(note.cites)] });
      keptNoteTexts.push(note.text);
    }
  }

  const keptAvoidTexts = ctx.learned.notFor.map((n) => n.text);
  for (const item of proposal.notFor) {
    const r =
      vetNotFor(item, ctx, options) ??
      checkNotSaid("not_for", item.text, keptAvoidTexts, 1, "already_kept") ??
      checkNotSaid("not_for", item.text, ctx.turnedDown?.notFor ?? [], 1, "turned_down") ??
      checkCap("not_for", item.text, keptAvoidTexts.length, settings.maxAvoid, '"Not for" lines on the card');
    if (r) refused.push(r);
    else {
      kept.notFor.push({ text: item.text, tool: item.tool, cites: [...new Set(item.cites)] });
      keptAvoidTexts.push(item.text);
    }
  }

  const examples = vetExamples(proposal.examples, ctx, options, settings, threshold);
  kept.examples = examples.kept;
  refused.push(...examples.refused);
  return { kept, refused, displaced: examples.displaced };
}

function vetExamples(
  proposed: readonly ProposedExample[],
  ctx: VetContext,
  options: VetOptions,
  settings: VetSettings,
  threshold: number,
): { kept: ProposedExample[]; refused: Refusal[]; displaced: string[] } {
  const refused: Refusal[] = [];
  // Learned and unknown-source examples never give way: a repeat of one is already kept.
  const fixed = ctx.learned.examples.filter((e) => e.source !== "synthetic").map((e) => e.text);
  const accepted: ProposedExample[] = [];
  for (const example of proposed) {
    const r =
      vetExample(example, ctx, options) ??
      checkNotSaid("example", example.text, [...fixed, ...accepted.map((a) => a.text)], threshold, "already_kept") ??
      checkNotSaid("example", example.text, ctx.turnedDown?.examples ?? [], threshold, "turned_down") ??
      checkCap("example", example.text, accepted.length, settings.maxNewQueries, "new examples in this review");
    if (r) refused.push(r);
    else accepted.push({ text: example.text, cites: [...new Set(example.cites)] });
  }

  // Synthetic examples, oldest first; each may give way once.
  const synthetic = ctx.learned.examples
    .map((e, index) => ({ e, index }))
    .filter(({ e }) => e.source === "synthetic")
    .sort((a, b) => a.e.addedAt - b.e.addedAt || a.index - b.index)
    .map(({ e }) => e.text);
  const remaining = new Set(synthetic.map((_, i) => i));
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

// ------------------------------------------------------------------ helpers for the manager

/** The evidence maps of {@link VetContext} for one tool, from its detection. */
export function evidenceMaps(
  td: ToolDetection,
): Pick<VetContext, "failedCallIds" | "missedRequests" | "confusedRequests"> {
  const failedCallIds = new Set<string>();
  for (const f of td.failures) for (const id of f.callIds) failedCallIds.add(id);
  const missedRequests = new Map<string, string>();
  for (const m of td.misses) missedRequests.set(m.requestId, m.request);
  const confusedRequests = new Map<string, { servedBy: string; request: string }>();
  for (const c of td.confusions) confusedRequests.set(c.requestId, { servedBy: c.servedBy, request: c.request });
  return { failedCallIds, missedRequests, confusedRequests };
}

/**
 * The card's examples after a vetted review is applied: the displaced synthetic ones removed
 * (each text once), the kept ones appended as `learned` with the revision id.
 */
export function mergeExamples(
  current: readonly Example[],
  kept: readonly ProposedExample[],
  displaced: readonly string[],
  revisionId: string,
  now: number,
): Example[] {
  const toRemove = [...displaced];
  const out: Example[] = [];
  for (const e of current) {
    const at = e.source === "synthetic" ? toRemove.indexOf(e.text) : -1;
    if (at >= 0) toRemove.splice(at, 1);
    else out.push(e);
  }
  for (const k of kept) out.push({ text: k.text, source: "learned", revisionId, addedAt: now });
  return out;
}

function normalized(text: string): string {
  return oneLine(text).toLowerCase();
}
