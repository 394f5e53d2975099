/**
 * One proposed item through the vet: the gate every lesson text passes ({@link gateLesson}), the
 * rules particular to each kind of line ({@link LINE_RULES}; thresholds, caps and shared words
 * come from the lesson-kinds table), and {@link vetLine} running them over one usage note,
 * "Not for" line or example request. {@link vetExampleCall} holds the example call built by code
 * to the text rules.
 */
import { EXAMPLE_CALL_PREFIX } from "./example-call.js";
import { LESSON_KIND, type LineKindId } from "../ledger/lesson-kinds.js";
import type { Refusal, RefusalReason } from "../ledger/schema.js";
import { type GateRefusal, gateText } from "../text/gate.js";
import { allowedWords, type CitedRequest } from "../text/vocabulary.js";
import { evidenceLimits } from "./limits.js";
import type { ProposedExample, ProposedNote, ProposedNotFor } from "./types.js";
import { DEFAULT_VET_OPTIONS, type VetContext, type VetOptions } from "./vet-context.js";
import {
  checkCitations,
  checkLine,
  checkNamedTool,
  checkNoValue,
  checkNotAimedAtModel,
  checkNotForShape,
  checkNotSaid,
  checkServedByNamedTool,
  checkSharedWord,
  EQUIVALENCE_THRESHOLD,
  parseNotFor,
  refuse,
  type VetKind,
  WITHHELD_TEXT,
} from "./vet-rules.js";

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
export interface LineRules<K extends LineKindId> {
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
export function gatedItem<K extends LineKindId>(
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
