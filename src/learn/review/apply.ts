/**
 * Apply: a proposed revision put on its card. Routing is checked again for requests other tools
 * served: an example that would push the serving tool out of the offered set is withdrawn (notes
 * stay), and the revision records which and why. The card and the revision are written together;
 * the index is kept in step.
 */
import { clipForMessage, InvalidInput, NotFound, RevisionConflict, VetRefusal } from "../../errors.js";
import type { ToolIndex } from "../../routing/tool-index.js";
import { DEFAULT_PARTITION } from "../../ledger/keys.js";
import type { Ledger } from "../../ledger/ledger.js";
import type { Learned, Revision, ToolCard, TurnRecord } from "../../ledger/schema.js";
import { definedOnly } from "../../internal.js";
import { parseSettings, type Settings, type SettingsInput } from "../../settings.js";
import { checkApplicable, equivalent, mergeExamples } from "../vet.js";
import { type Displacement, WhatIf } from "../what-if.js";

/** Options of {@link applyRevision}. */
export interface ApplyOptions {
  /** Who approved the revision (recorded on it). */
  approvedBy: string;
  /**
   * The partition of the revision.
   * @default "default"
   */
  partition?: string;
  /**
   * Settings for this apply only, over the partition's stored ones.
   * @default {} (the stored settings)
   */
  config?: SettingsInput;
  /**
   * The partition's turn records, when the caller has read them already (a review applying its
   * own revisions).
   * @default read from the ledger
   */
  turns?: readonly TurnRecord[];
}

/** The defaults of {@link ApplyOptions} (`approvedBy` is required; `turns` are read when not given). */
export const DEFAULT_APPLY_OPTIONS: Readonly<Required<Omit<ApplyOptions, "approvedBy" | "turns">>> = Object.freeze({
  partition: DEFAULT_PARTITION,
  config: {},
});

/**
 * Apply the proposed revision `id`: its notes, "Not for" lines and example call go on the card,
 * its examples too unless routing withdraws them, synthetic examples giving way as the cap needs.
 * With `indexBehind`, the index failing to take the stored card is handed to it, not thrown.
 * @throws InvalidInput without `approvedBy`.
 * @throws NotFound when the revision or its card does not exist.
 * @throws RevisionConflict when the revision is not proposed, or the card changed since, or
 *   another operator applied or dismissed it meanwhile (`winner` names who; nothing written).
 * @throws VetRefusal when what it adds no longer passes the vet under the settings now (a line
 *   longer than `maxLineLength`, or more notes or "Not for" lines than their cap): dismiss it and
 *   review again.
 */
export async function applyRevision(
  ledger: Ledger,
  index: ToolIndex,
  id: string,
  options: ApplyOptions,
  indexBehind?: (error: unknown) => void,
): Promise<Revision> {
  if (!options.approvedBy?.trim()) throw new InvalidInput("apply() needs `approvedBy`: who approved this revision.");
  const o = { ...DEFAULT_APPLY_OPTIONS, ...definedOnly(options) };
  const partition = o.partition;
  const revision = await ledger.requireRevision(partition, id);
  if (revision.status !== "proposed") {
    const by = revision.status === "applied" ? revision.approvedBy : revision.closedBy;
    throw new RevisionConflict(
      `Revision ${id} is ${revision.status}${by ? ` (by ${by})` : ""}; only a proposed revision can be applied.`,
      { context: { id, status: revision.status, winner: by } },
    );
  }
  const card = await requireCard(ledger, partition, revision.tool);
  if (card.version !== revision.cardVersionBefore) {
    throw new RevisionConflict(
      `The card of "${revision.tool}" changed since revision ${id} was proposed (version ${revision.cardVersionBefore} → ${card.version}); review again.`,
      { context: { id, tool: revision.tool } },
    );
  }
  const settings = parseSettings(o.config, await ledger.getSettings(partition));
  const refusal = checkApplicable(revision, card.learned, settings);
  if (refusal) {
    throw new VetRefusal(
      refusal.reason,
      `Revision ${id} of "${revision.tool}" no longer passes the vet under the current settings: its ${refusal.kind.replace("_", " ")} is refused ${refusal.reason}${refusal.detail ? ` (${refusal.detail})` : ""}. Dismiss it and review again.`,
      { context: { id, tool: revision.tool, kind: refusal.kind } },
    );
  }
  const displacedRequests = await displacements(
    ledger,
    index,
    partition,
    card,
    revision.queriesAdded,
    settings,
    o.turns,
  );
  const withdrawn = [...new Set(displacedRequests.map((d) => d.query))];
  const added = revision.queriesAdded.filter((q) => !withdrawn.includes(q));
  const giveWay = yielding(card.learned, added, revision.queriesDisplaced, settings.maxQueries);

  const now = Date.now();
  const learned: Learned = {
    examples: mergeExamples(
      card.learned.examples,
      added.map((text) => ({ text, cites: [] })),
      giveWay,
      id,
      now,
    ),
    notes: [...card.learned.notes, ...revision.notesAdded.map((text) => ({ text, revisionId: id }))],
    notFor: [...card.learned.notFor, ...revision.avoidAdded.map((n) => ({ ...n, revisionId: id }))],
    exampleCall:
      revision.callExample !== null ? { text: revision.callExample, revisionId: id } : card.learned.exampleCall,
  };
  const applied: Revision = {
    ...revision,
    status: "applied",
    approvedBy: options.approvedBy,
    queriesWithdrawn: withdrawn,
    displaced: displacedRequests,
    queriesDisplaced: giveWay,
    learnedBefore: card.learned,
    cardVersionAfter: card.version + 1,
    updatedAt: now,
  };
  // One compare-and-set settled by the store: the revision still proposed, the card still at
  // the version read. Of two operators applying (or one dismissing), the loser writes nothing.
  const [saved] = await ledger.commit(partition, {
    cards: [{ ...card, learned }],
    revisions: [applied],
    expectVersion: card.version,
    expectStatus: { [id]: "proposed" },
  });
  await keepIndexInStep(index, partition, saved, indexBehind);
  return applied;
}

/**
 * The index brought up to date with a card just stored. With `indexBehind`, a failure is handed
 * to it instead of thrown: the change is stored and announced, and every index follows it.
 */
export async function keepIndexInStep(
  index: Pick<ToolIndex, "upsertCards">,
  partition: string,
  card: ToolCard,
  indexBehind?: (error: unknown) => void,
): Promise<void> {
  try {
    await index.upsertCards(partition, [card]);
  } catch (error) {
    if (!indexBehind) throw error;
    indexBehind(error);
  }
}

/** The card of a registered tool. @throws NotFound */
export async function requireCard(ledger: Ledger, partition: string, tool: string): Promise<ToolCard> {
  const card = await ledger.getCard(partition, tool);
  if (!card)
    throw new NotFound(
      `No tool "${clipForMessage(tool)}" is registered in partition "${clipForMessage(partition, 256)}".`,
      { context: { tool: clipForMessage(tool) } },
    );
  return card;
}

/**
 * For each new example, the first request served by another tool that it alone would push
 * that tool out of the offered set for (see {@link WhatIf.displaces}), against the index now.
 * Checked over the review's window of turns (the newest `reviewTurns`), not the whole history.
 */
async function displacements(
  ledger: Ledger,
  index: ToolIndex,
  partition: string,
  card: ToolCard,
  added: readonly string[],
  settings: Settings,
  known?: readonly TurnRecord[],
): Promise<Displacement[]> {
  if (added.length === 0) return [];
  const [cards, turns] = await Promise.all([
    ledger.listCards(partition),
    known ?? ledger.listTurns(partition, { limit: settings.reviewTurns }),
  ]);
  const whatIf = new WhatIf(index, partition, settings.routingK, new Map(cards.map((c) => [c.name, c])));
  const served = turns.filter((t) => t.servedBy !== undefined);
  const out: Displacement[] = [];
  for (const query of added) {
    const hit = await whatIf.displaces(card.name, query, await whatIf.variant(card, [query]), served);
    if (hit) out.push(hit);
  }
  return out;
}

/**
 * Which synthetic examples give way when only `added` of a revision's examples are applied:
 * those equivalent to an added one, then as many of the rest as the cap needs.
 */
function yielding(
  learned: Learned,
  added: readonly string[],
  proposed: readonly string[],
  maxQueries: number,
): string[] {
  const byEquivalence = proposed.filter((s) => added.some((a) => equivalent(a, s)));
  const rest = proposed.filter((s) => !byEquivalence.includes(s));
  const over = learned.examples.length - byEquivalence.length + added.length - maxQueries;
  return [...byEquivalence, ...rest.slice(0, Math.max(0, over))];
}
