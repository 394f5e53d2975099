/**
 * The one check every rule's text passes before it is stored: an edict keeps the user's wording
 * (it is theirs, and binds only their partition), but it reaches a system prompt, so it is
 * normalized, refused when it carries text aimed at the model, and capped in length.
 *
 * The single place to point at the privacy gate (`src/text/gate.ts`) once it lands.
 */
import { oneLine } from "../internal.js";
import { findAimedAtModel } from "../text/injection.js";
import type { RefusalReason } from "../ledger/schema.js";

/** Longest rule text, in characters, after normalizing. */
export const MAX_RULE_LENGTH = 240;

/** Why a rule's text was refused: blank, longer than {@link MAX_RULE_LENGTH}, or aimed at the model. */
export type RuleTextRefusal = Extract<RefusalReason, "empty" | "too_long" | "aimed_at_model">;

/** The outcome of {@link vetEdictText}. */
export type VettedRuleText = { ok: true; text: string } | { ok: false; reason: RuleTextRefusal; detail: string };

/** Format characters (zero-width, bidi controls, soft hyphens): invisible, and a way to hide words from a check. */
const INVISIBLE = /\p{Cf}/gu;

/**
 * A rule's text as stored, or why it is refused: NFKC-normalized, invisible and bidi characters
 * removed, whitespace collapsed to one line; refused when blank, longer than
 * {@link MAX_RULE_LENGTH} characters, or when it carries text aimed at the model (instructions
 * to a model, role markers, chat-template tokens, tool-call syntax). The user's words are kept.
 *
 * @example vetEdictText("Never  email\u200b Sarah.") // { ok: true, text: "Never email Sarah." }
 */
export function vetEdictText(text: string): VettedRuleText {
  const normalized = oneLine(text.normalize("NFKC").replace(INVISIBLE, ""));
  if (normalized === "") return { ok: false, reason: "empty", detail: "the text is blank" };
  if (normalized.length > MAX_RULE_LENGTH) {
    return {
      ok: false,
      reason: "too_long",
      detail: `${normalized.length} characters, over the ${MAX_RULE_LENGTH} a rule may have`,
    };
  }
  const aimed = findAimedAtModel(normalized);
  if (aimed !== undefined) return { ok: false, reason: "aimed_at_model", detail: `it reads as ${aimed}` };
  return { ok: true, text: normalized };
}
