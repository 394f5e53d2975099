/**
 * Undo: take back the newest applied revision of a tool, restoring what its card learned before
 * (synthetic examples that gave way included), the card and the revision written together and the
 * routing index kept in step. The operator's `undo` and the effect check's automatic undo
 * (`review/effect.ts`) are this one step.
 */
import { clipForMessage, NotFound, RevisionConflict } from "../../errors.js";
import type { Ledger } from "../../ledger/ledger.js";
import type { Revision } from "../../ledger/schema.js";
import type { ToolIndex } from "../../routing/tool-index.js";
import { keepIndexInStep, requireCard } from "./apply.js";

/** Who undid it, and why when the package undid it (`undoneBecause`). */
export interface UndoBy {
  by: string;
  because?: string;
}

/**
 * Undo the newest applied revision of `tool`.
 * @throws NotFound (nothing applied), RevisionConflict (the card was edited since)
 */
export async function undoNewest(
  ledger: Ledger,
  index: Pick<ToolIndex, "upsertCards">,
  partition: string,
  tool: string,
  who: UndoBy,
  indexBehind?: (error: unknown) => void,
): Promise<Revision> {
  const [revision] = await ledger.listRevisions(partition, { tool, status: "applied" });
  if (!revision || !revision.learnedBefore) {
    throw new NotFound(`"${clipForMessage(tool)}" has no applied revision to undo.`, {
      context: { tool: clipForMessage(tool), partition: clipForMessage(partition, 256) },
    });
  }
  const card = await requireCard(ledger, partition, tool);
  const left = await versionLeftBy(ledger, partition, revision);
  if (card.version !== left) {
    throw new RevisionConflict(
      `The card of "${tool}" was changed after revision ${revision.id} was applied (version ${left} → ${card.version}); undo would lose that change.`,
      { context: { tool, id: revision.id } },
    );
  }
  const undone: Revision = {
    ...revision,
    status: "undone",
    closedBy: who.by,
    ...(who.because !== undefined ? { undoneBecause: who.because } : {}),
    updatedAt: Date.now(),
  };
  const [saved] = await ledger.commit(partition, {
    cards: [{ ...card, learned: revision.learnedBefore }],
    revisions: [undone],
    expectVersion: card.version,
    expectStatus: { [revision.id]: "applied" },
  });
  await keepIndexInStep(index, partition, saved, indexBehind);
  return undone;
}

/**
 * The card version a revision's apply left, carried past later revisions of the tool that were
 * applied and undone since: each left the card as it found it, two versions on. So a second
 * undo takes back the revision before the one undone.
 */
async function versionLeftBy(ledger: Ledger, partition: string, revision: Revision): Promise<number | undefined> {
  const undone = (await ledger.listRevisions(partition, { tool: revision.tool, status: "undone" })).sort(
    (a, b) => a.cardVersionBefore - b.cardVersionBefore,
  );
  let version = revision.cardVersionAfter;
  for (const later of undone) {
    if (later.cardVersionAfter !== undefined && later.cardVersionBefore === version)
      version = later.cardVersionAfter + 1;
  }
  return version;
}
