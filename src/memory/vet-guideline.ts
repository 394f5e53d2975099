/**
 * The vet of a guideline, like every other lesson's: each line is one non-blank line within
 * `maxLineLength`, holds no argument value of any call in the window (their keyed fingerprints,
 * the way the review's vet checks), no text aimed at the model, no private data the gate's
 * detectors find (an email, a key, a phone number …), no reference to an individual
 * call, and states nothing as always or never true unless every recent call agrees; each part
 * keeps at most three lines, and the whole guideline at most `maxGuidelineLength` characters.
 * What is refused is recorded with its reason; a part left with nothing says "Not enough data".
 * Pure: the value check comes in as a function.
 */
import { lazy } from "../memo.js";
import { oneLine } from "../internal.js";
import type { EvaluatedCall, GuidelineRefusal, GuidelineRefusalReason } from "../ledger/schema.js";
import { gateText } from "../text/gate.js";
import { valueCheckOf } from "../text/mask.js";
import { normalizeText } from "../text/normalize.js";
import { allowedWords, type AllowedWords, keepAllowedWords, type VocabularyRefusal } from "../text/vocabulary.js";
import { MAX_PART_LINES, NOT_ENOUGH_DATA } from "./synthesis.js";
import type { GuidelineDraft } from "./types.js";

/** The text kept in a refusal of a line that held an argument value. */
export const WITHHELD = "(withheld: holds an argument value or private data)";

/** The text kept in a refusal of a line aimed at the model. */
export const WITHHELD_AIMED = "(withheld: aimed at the model)";

/** Whether a text holds an argument value (wired to the window's value fingerprints). */
export type ContainsValue = (text: string) => boolean;

/** What the vet knows of one tool's window. */
export interface GuidelineVetContext {
  /** True when a text holds an argument value of a call in the window. */
  containsValue: ContainsValue;
  /** Ids of the calls in the window: a guideline names none of them. */
  callIds: ReadonlySet<string>;
  /** True when every recent call had the same outcome and score: only then may a line say "always". */
  unanimous: boolean;
  maxLineLength: number;
  maxGuidelineLength: number;
  /**
   * The words a line may use, as for every lesson (`allowedWords({ card, toolNames, isValue })`):
   * other words are masked as `<word>`, and a line with too many of them is refused.
   * @default allowedWords() (the common-word vocabulary only)
   */
  allowed?: AllowedWords;
}

/** What the vet kept of a draft, and what it refused. */
export interface VettedGuideline {
  parts: GuidelineDraft;
  refused: GuidelineRefusal[];
}

/** A line about one call rather than the pattern: "call #3", "the last call", "in one call". */
const ONE_CALL =
  /\bcalls?\s*(?:#|no\.?\s*|number\s*)\d+|\bcall\s+\d+\b|\b(?:the|one|a|this|that)\s+(?:first|second|third|fourth|fifth|last|latest|previous|earlier|single|particular|specific|other)\s+(?:call|request)\b|\b(?:in|on|for)\s+one\s+(?:call|request)\b|\bcall\s+ids?\b/i;

/** A claim that something holds without exception. */
const ABSOLUTE =
  /\b(?:always|never|invariably|without exception|in every case|every time|each time|all the time|guaranteed)\b|\b(?:every|all)\s+(?:calls?|requests?|uses?)\b|\b100\s*%/i;

/** The value check over a window: every fingerprint of its calls, with the ledger's key. */
export function windowValueCheck(window: readonly EvaluatedCall[], key: string): ContainsValue {
  return valueCheckOf(window, key);
}

/** True when every call of `recent` had the same outcome and the same score. */
export function isUnanimous(recent: readonly EvaluatedCall[]): boolean {
  return recent.every((r) => r.success === recent[0].success && r.score === recent[0].score);
}

/** Why a line failed. */
export interface LineRefusal {
  reason: GuidelineRefusalReason;
  detail?: string;
}

/** The line's reason for each refusal of the gate that is about the words (the others have their own checks). */
const WORD_REFUSALS: Readonly<Record<VocabularyRefusal, GuidelineRefusalReason>> = Object.freeze({
  value_word: "contains_value",
  unknown_word: "too_many_unknown_words",
  too_many_unknown_words: "too_many_unknown_words",
  no_allowed_words: "no_allowed_words",
});

/**
 * One line through the vet: its first failing rule, or the text kept, with only allowed words
 * (others masked as `<word>`, as in every lesson). Digits are kept: a guideline's counts are the
 * package's own statistics, and a value of a call is refused before.
 */
export function gateGuidelineLine(text: string, ctx: GuidelineVetContext): LineRefusal | { text: string } {
  if (text.trim() === "") return { reason: "empty" };
  if (/[\r\n\u2028\u2029\u0085\v\f]/.test(text)) return { reason: "multi_line" };
  if (text.length > ctx.maxLineLength) {
    return { reason: "too_long", detail: `${text.length} characters; at most ${ctx.maxLineLength}` };
  }
  if (ctx.containsValue(text)) return { reason: "contains_value" };
  // One pass through the gate, as a prompt text: its check for text aimed at the model, its detectors.
  const gated = gateText(text, { kind: "prompt" });
  if (gated.aimed !== undefined) return { reason: "aimed_at_model", detail: gated.aimed };
  const named = [...ctx.callIds].find((id) => id.length >= 6 && text.includes(id));
  if (named !== undefined || ONE_CALL.test(text)) {
    return { reason: "refers_to_call", detail: named !== undefined ? "names a call id" : "speaks of one call" };
  }
  if (gated.masked.length > 0) {
    return { reason: "contains_private_data", detail: [...new Set(gated.masked)].join(", ") };
  }
  const kept = keepAllowedWords(normalizeText(text), ctx.allowed ?? commonOnly());
  if (kept.refused !== undefined) return { reason: WORD_REFUSALS[kept.refused] };
  const absolute = ABSOLUTE.exec(text);
  if (absolute && !ctx.unanimous) {
    return { reason: "overstated", detail: `"${absolute[0]}" while the recent calls disagree` };
  }
  return { text: kept.text };
}

/** The allowed words with no card: the common vocabulary only. */
const commonOnly: () => AllowedWords = lazy(() => allowedWords());

/** One line's first failing rule, or `null` (see {@link gateGuidelineLine}). */
export function checkGuidelineLine(text: string, ctx: GuidelineVetContext): LineRefusal | null {
  const r = gateGuidelineLine(text, ctx);
  return "reason" in r ? r : null;
}

/**
 * What a guideline row keeps of a refused line, like every other sink keeps untrusted text: never
 * the raw line. A line holding an argument value or private data becomes {@link WITHHELD}; one
 * aimed at the model {@link WITHHELD_AIMED}; any other is kept normalized, on one line, clipped
 * to `maxLineLength`, with the detectors' spans and digits masked and only allowed words (others
 * `<word>`), so an operator can read why it went and nothing private is kept.
 */
export function refusedLineText(text: string, ctx: GuidelineVetContext): string {
  const line = oneLine(text).slice(0, ctx.maxLineLength);
  if (ctx.containsValue(text) || ctx.containsValue(line)) return WITHHELD;
  const gated = gateText(text, { kind: "stored" });
  if (gated.aimed !== undefined) return WITHHELD_AIMED;
  if (gated.masked.length > 0) return WITHHELD;
  return keepAllowedWords(oneLine(gated.text).slice(0, ctx.maxLineLength), ctx.allowed ?? commonOnly()).text;
}

type ListPart = "whatWorks" | "commonIssues" | "bestPractices";
const LIST_PARTS: readonly ListPart[] = ["whatWorks", "commonIssues", "bestPractices"];

/** Vet a draft: keep the lines that pass, refuse the rest with their reason. */
export function vetGuideline(draft: GuidelineDraft, ctx: GuidelineVetContext): VettedGuideline {
  const refused: GuidelineRefusal[] = [];
  const refuse = (text: string, reason: GuidelineRefusalReason, detail?: string) =>
    refused.push({ text: refusedLineText(text, ctx), reason, ...(detail !== undefined ? { detail } : {}) });
  /** The line as kept, or `undefined` when it was refused. */
  const keep = (text: string): string | undefined => {
    const r = gateGuidelineLine(text, ctx);
    if ("reason" in r) refuse(text, r.reason, r.detail);
    return "reason" in r ? undefined : r.text;
  };

  const parts: GuidelineDraft = {
    coreFunction: keep(oneLine(draft.coreFunction)) ?? NOT_ENOUGH_DATA,
    whatWorks: [],
    commonIssues: [],
    bestPractices: [],
  };
  for (const part of LIST_PARTS) {
    for (const raw of draft[part]) {
      const text = keep(raw.trim());
      if (text === undefined) continue;
      if (parts[part].some((t) => t.toLowerCase() === text.toLowerCase())) {
        refuse(text, "already_kept");
      } else if (parts[part].length >= MAX_PART_LINES) {
        refuse(text, "cap_reached", `at most ${MAX_PART_LINES} lines per part`);
      } else {
        parts[part].push(text);
      }
    }
  }

  // Over the length cap: the last line of the longest part goes, until it fits (a part keeps one).
  const length = () =>
    [parts.coreFunction, ...LIST_PARTS.flatMap((p) => parts[p])].reduce((n, line) => n + line.length, 0);
  while (length() > ctx.maxGuidelineLength) {
    const longest = LIST_PARTS.filter((p) => parts[p].length > 1).sort(
      (a, b) => parts[b].join("").length - parts[a].join("").length,
    )[0];
    if (longest === undefined) break;
    const dropped = parts[longest].pop() as string;
    refuse(dropped, "cap_reached", `the guideline would be over ${ctx.maxGuidelineLength} characters`);
  }

  for (const part of LIST_PARTS) if (parts[part].length === 0) parts[part].push(NOT_ENOUGH_DATA);
  return { parts, refused };
}
