/**
 * Store: a review's revisions and review marks written to the ledger.
 */
import type { Ledger } from "../../ledger/ledger.js";
import type { Revision } from "../../ledger/schema.js";

/**
 * Write each proposed revision, then the tools' review marks (the newest call record each review
 * read: a tool with no call since costs no model call next time).
 */
export async function storeReview(
  ledger: Ledger,
  partition: string,
  revisions: readonly Revision[],
  marks: ReadonlyMap<string, string>,
): Promise<void> {
  for (const revision of revisions) await ledger.putRevision(revision);
  await ledger.markReviewed(partition, marks);
}
