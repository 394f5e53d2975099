/**
 * Vet: one tool's proposal through the vet, and the example call built by code and vetted the same
 * way. Pure: the value fingerprints come in with the window.
 */
import { cardWords } from "../../ledger/cards.js";
import type { Refusal } from "../../ledger/schema.js";
import { valueCheckOf } from "../../text/mask.js";
import { buildExampleCall } from "../example-call.js";
import type { Proposal } from "../types.js";
import { type ContainsValue, evidenceMaps, type VetOptions, vetExampleCall, vetProposal } from "../vet.js";
import type { ReviewWindow } from "./gather.js";
import type { ToolReviewEvidence } from "./evidence.js";

/** What the vet kept of one tool's review, and everything it refused. */
export interface VettedLessons {
  /** The proposal's items the vet kept. */
  kept: Proposal;
  /** Synthetic examples that give way to the kept ones. */
  displaced: string[];
  /** The example call built from the successful calls, when it passed and is new. */
  callExample: string | null;
  /** Everything refused, in order: the proposal's items, the proposal as a whole, the example call. */
  refused: Refusal[];
}

/** Whether a text holds an argument value of any call in the window (its keyed fingerprints). */
export function valueCheck(window: Pick<ReviewWindow, "calls" | "fingerprintKey">): ContainsValue {
  return valueCheckOf(window.calls, window.fingerprintKey);
}

/**
 * Vet one tool's proposal against its evidence ({@link vetProposal}); a proposal refused as a
 * whole is recorded as a `proposal` refusal. Then the example call: built by code from the
 * successful calls when at least `minFailures` were refused ({@link buildExampleCall}), kept when
 * it is new for the card and passes {@link vetExampleCall}.
 */
export function vetLessons(input: {
  window: Pick<ReviewWindow, "cards" | "settings">;
  evidence: Pick<ToolReviewEvidence, "card" | "detection" | "turnedDown"> &
    Partial<Pick<ToolReviewEvidence, "yielding">>;
  proposal: Proposal;
  containsValue: ContainsValue;
  options?: VetOptions;
}): VettedLessons {
  const { window, evidence, proposal, containsValue } = input;
  const { card, detection, turnedDown } = evidence;
  const settings = window.settings;
  const words = [...cardWords(card), ...shapeWords(detection)];
  const vetted = vetProposal(
    proposal,
    {
      tool: card.name,
      card: words,
      registeredTools: window.cards.map((c) => c.name),
      settings,
      learned: card.learned,
      ...evidenceMaps(detection),
      containsValue,
      turnedDown,
      yielding: evidence.yielding,
    },
    input.options,
  );
  const refused = [...vetted.refused];
  if (proposal.rejected)
    refused.push({ kind: "proposal", text: "", reason: proposal.rejected.reason, detail: proposal.rejected.detail });
  let callExample: string | null = null;
  const built = buildExampleCall(detection.successes, detection.refusedCount, settings.minFailures);
  if (built !== null && built !== card.learned.exampleCall?.text) {
    const r = vetExampleCall(
      built,
      { tool: card.name, card: words, containsValue, settings, turnedDown },
      input.options,
    );
    if (r) refused.push(r);
    else callExample = built;
  }
  return { kept: vetted.kept, displaced: vetted.displaced, callExample, refused };
}

/**
 * The masked shapes the tool's calls passed (`ORD-######`, `<email>`): their letter parts are
 * format, not value (a value's own tokens are masked in a shape), so a lesson may name them
 * ("order_id needs its ORD- prefix").
 */
function shapeWords(detection: Pick<ToolReviewEvidence["detection"], "successes" | "failures">): string[] {
  const out = new Set<string>();
  for (const call of detection.successes) for (const a of call.args) out.add(a.shape);
  for (const group of detection.failures) for (const a of group.shapes) for (const s of a.shapes) out.add(s.shape);
  return [...out];
}

/** True when the vet kept nothing: no revision is written. */
export function keptNothing(v: VettedLessons): boolean {
  return v.kept.notes.length + v.kept.examples.length + v.kept.notFor.length === 0 && v.callExample === null;
}
