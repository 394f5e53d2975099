/**
 * Store: a review's revisions and review marks written to the ledger.
 */
import { RevisionConflict } from "../../errors.js";
import type { Ledger } from "../../ledger/ledger.js";
import type { Revision } from "../../ledger/schema.js";

/**
 * Write each proposed revision, then the tools' review marks (the newest call record each review
 * read: a tool with no call since costs no model call next time). Returns the revisions stored.
 *
 * Each revision is written with a claim on its tool (one compare-and-set settled by the store,
 * see `ledger/collections/revisions.ts`) against the newest revision of the tool this review saw
 * (`seen`, the window's revisions): when another review, in this process or another, stored a
 * revision of the tool since, this one is left out (not stored, not returned), so two reviews
 * started at once propose each tool once.
 */
export async function storeReview(
  ledger: Ledger,
  partition: string,
  revisions: readonly Revision[],
  marks: ReadonlyMap<string, string>,
  seen: readonly Revision[] = [],
): Promise<Revision[]> {
  const newest = new Map<string, string>();
  for (const r of seen) {
    const known = newest.get(r.tool);
    if (known === undefined || r.id > known) newest.set(r.tool, r.id);
  }
  const stored: Revision[] = [];
  for (const revision of revisions) {
    try {
      await ledger.commit(partition, {
        revisions: [revision],
        expectStatus: { [revision.id]: null },
        claims: [{ tool: revision.tool, revision: revision.id, seen: newest.get(revision.tool) ?? null }],
      });
      stored.push(revision);
    } catch (error) {
      if (!(error instanceof RevisionConflict && error.context["reason"] === "claim")) throw error;
    }
  }
  await ledger.markReviewed(partition, marks);
  return stored;
}
