/**
 * The vet: the code that decides what a proposer's suggestions may become. The model (or the
 * deterministic proposer) only proposes; every rule is a small pure function returning `null`
 * (keep) or a {@link Refusal} with a stable machine code (`vet-rules.ts`), and
 * {@link vetProposal} runs them all, in a fixed order, over one tool's proposal.
 *
 * The kinds of lesson a proposer writes (usage notes, "Not for" lines, example requests) go
 * through one loop: thresholds, caps and whether a line must share a word with what it cites
 * come from the lesson-kinds table (`ledger/lesson-kinds.ts`); what is particular to a kind
 * (what it may cite, a "Not for" line's shape) is stated once per kind in `LINE_RULES`
 * (`vet-lines.ts`). What the vet is told about a tool is a `VetContext` (`vet-context.ts`).
 *
 * Nothing the vet refuses is stored as a lesson. A refusal keeps the proposed text for the
 * operator, except when the text holds an argument value: then the text is withheld.
 */
import { LESSON_KIND, LESSON_KINDS, type LessonKind, type LineKindId } from "../ledger/lesson-kinds.js";
import {
  type Example,
  type Learned,
  type Refusal,
  type RefusalReason,
  RefusalReasonSchema,
  type Revision,
} from "../ledger/schema.js";
import { evidenceLimits } from "./limits.js";
import type { Proposal, ProposedExample } from "./types.js";
import { withoutExamples } from "./card-examples.js";
import type { VetContext, VetOptions, VetSettings } from "./vet-context.js";
import { gatedItem, LINE_RULES, type LineRules, type ProposedLines, vetLine } from "./vet-lines.js";
import { checkCap, checkLine, checkNotSaid, equivalent, EQUIVALENCE_THRESHOLD, refuse } from "./vet-rules.js";

// Re-exported for the modules that import the vet from here (the manager, the review, the barrel).
export { type AimedPattern, DEFAULT_VET_OPTIONS, evidenceMaps, turnedDownOf, type VetOptions } from "./vet-context.js";
export { vetExampleCall } from "./vet-lines.js";
export { type ContainsValue, equivalent } from "./vet-rules.js";

/** Every refusal reason, as stable machine codes (the options of `RefusalReasonSchema`). */
export const REFUSAL_REASONS: readonly RefusalReason[] = RefusalReasonSchema.options;

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
