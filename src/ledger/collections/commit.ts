import type { Operation } from "@langchain/langgraph";
import type { Revision, ToolCard } from "../schema.js";
import type { CardRows } from "./card-rows.js";
import type { RevisionRows } from "./revisions.js";
import { type LedgerContext, putOp } from "./store-io.js";

/** One change to a partition's cards and revisions, written together by {@link commit}. */
export interface LedgerChange {
  cards?: ToolCard[];
  revisions?: Revision[];
  /** The version every stored card must be at (0: no card yet); checked before anything is written. */
  expectVersion?: number;
}

/**
 * The one write of cards and revisions: everything is checked first (partition, expected
 * version, schemas), then written in ONE store batch, which is one transaction on `SqliteStore`
 * and on the store `openPostgresStore` returns. A crash leaves the old state or the new, never a
 * card without its revision. Returns the saved cards (versions bumped).
 * @throws InvalidInput for a card of another partition, or a card or revision that does not
 *   match its schema.
 * @throws RevisionConflict when `expectVersion` is given and a card moved on.
 */
export async function commit(
  ctx: LedgerContext,
  collections: { cards: CardRows; revisions: RevisionRows },
  partition: string,
  change: LedgerChange,
): Promise<ToolCard[]> {
  const now = Date.now();
  const saved = await collections.cards.next(partition, change.cards ?? [], change.expectVersion, now);
  const revisions = collections.revisions.next(change.revisions ?? []);
  const ops: Operation[] = [
    ...saved.map((c) => putOp(ctx, partition, "cards", c.name, c)),
    ...revisions.map((r) => putOp(ctx, partition, "revisions", r.id, r)),
  ];
  if (ops.length > 0) await ctx.store.batch(ops);
  return saved;
}
