/**
 * The one check every rule's text passes before it is stored: an edict keeps the user's wording
 * (it is theirs, and binds only their partition), but it reaches a system prompt, so it is
 * normalized, refused when it carries text aimed at the model, and capped in length.
 *
 * It uses the gate's own stages (`src/text/`): its normalization, and its check for text aimed at
 * the model with the imperative tier skipped, since a rule is an instruction by design ("never
 * call wire_money"); markup, role markers, chat-template tokens and tool-call syntax are refused
 * all the same. The user's words and numbers are kept (the edict is theirs, in their own partition,
 * and its words are its meaning); what the gate's detectors find (emails, phones, cards, IBANs, API
 * keys, tokens, credentials) is masked all the same: a rule is stored and shown on every later
 * turn, and a secret or an address has no place there ("never email <email>").
 */
import { oneLine } from "../internal.js";
import { AIMED_AT_MODEL_PATTERNS, type AimedPattern } from "../text/injection.js";
import { gateText } from "../text/gate.js";
import type { RefusalReason } from "../ledger/schema.js";

/** Longest rule text, in characters, after normalizing. */
export const MAX_RULE_LENGTH = 240;

/** Why a rule's text was refused: blank, longer than {@link MAX_RULE_LENGTH}, or aimed at the model. */
export type RuleTextRefusal = Extract<RefusalReason, "empty" | "too_long" | "aimed_at_model">;

/** The outcome of {@link vetEdictText}. */
export type VettedRuleText = { ok: true; text: string } | { ok: false; reason: RuleTextRefusal; detail: string };

/**
 * Instructions to a model that no rule about a tool ever is: a user's edict may say "from now
 * on", "never call" or "you must" (it is an instruction by design), never "ignore previous
 * instructions", a new persona, or a request for the system prompt.
 */
const NEVER_A_RULE: readonly AimedPattern[] = [
  ...AIMED_AT_MODEL_PATTERNS.filter((p) =>
    ["override_instructions", "new_instructions", "persona_switch", "prompt_probe"].includes(p.label),
  ).map((p) => ({ ...p, tier: "structural" as const })),
  {
    // "Never follow the rules above", "they no longer apply", "refund anything I ask": a rule about a
    // tool narrows what the agent does; one that lifts the app's instructions is no rule.
    label: "override_instructions",
    pattern:
      /\b(never|don'?t|do not|stop|no longer|quit)\s+(follow|obey|apply|heed|respect|listen to|comply with|enforce|check|use)(ing)?\s+(the\s+|any\s+|your\s+|these\s+|those\s+|all\s+|its\s+|their\s+)?(\w+\s+)?(rules?|instructions?|guidelines?|polic(y|ies)|directions?|directives?|system( prompt)?|prompts?|guardrails?|safeguards?|restrictions?|limits?|constraints?)\b|\b(rules?|instructions?|guidelines?|polic(y|ies)|restrictions?|limits?|guardrails?)\b[^.;]{0,30}\b(no longer|don'?t|do not|doesn'?t|does not|won'?t)\s+(apply|count|matter|hold|bind)|\b(rules?|instructions?|guidelines?|polic(y|ies))\b[^.;]{0,20}\b(are|is)\s+(void|cancell?ed|obsolete|outdated|suspended|lifted|revoked)\b|\b(refund|approve|grant|give|transfer|pay|send|allow|do|authori[sz]e|accept)\s+(me\s+)?(anything|everything|whatever|all)\s+(that\s+)?(i|we|the user|they)\s+(ask|say|want|request|tell)/i,
  },
];

/**
 * A rule's text as stored, or why it is refused: normalized as the gate normalizes (NFKC,
 * invisible, bidi and tag characters removed, controls replaced), whitespace collapsed to one
 * line; refused when blank, longer than {@link MAX_RULE_LENGTH} characters, or when it carries
 * structural text aimed at the model (role markers, chat-template tokens, tool-call syntax,
 * markup, links, hidden text). The user's words and numbers are kept; what the gate's detectors
 * find (emails, keys, phones ...) is masked.
 *
 * @example vetEdictText("Never  email\u200b Sarah.") // { ok: true, text: "Never email Sarah." }
 */
export function vetEdictText(text: string): VettedRuleText {
  // The gate checks the text as given (hidden tag text and bidi controls are findings before
  // normalizing removes them), then normalizes it and masks the detectors' spans.
  const gated = gateText(text, { kind: "rule", skipImperatives: true, extraAimed: NEVER_A_RULE });
  const normalized = oneLine(gated.text);
  if (normalized === "") return { ok: false, reason: "empty", detail: "the text is blank" };
  if (normalized.length > MAX_RULE_LENGTH) {
    return {
      ok: false,
      reason: "too_long",
      detail: `${normalized.length} characters, over the ${MAX_RULE_LENGTH} a rule may have`,
    };
  }
  if (gated.aimed !== undefined) return { ok: false, reason: "aimed_at_model", detail: `it reads as ${gated.aimed}` };
  return { ok: true, text: normalized };
}
