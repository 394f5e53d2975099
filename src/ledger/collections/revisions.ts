import { NotFound } from "../../errors.js";
import { byId } from "../../internal.js";
import { type Revision, RevisionSchema, type RevisionStatus, SCHEMA_VERSION } from "../schema.js";
import { checked, type LedgerContext, listNamespace, namespaceOf, parseItem, parseItems } from "./store-io.js";

/**
 * Revisions: reviewable changes to one tool card (proposed → applied | dismissed; applied →
 * undone), with the evidence they rest on.
 *
 * Key layout: `[root, partition, "revisions"]`, key = the revision's time-ordered id → `Revision`.
 *
 * Invariants:
 * - written only through `commit`, in the same store batch as the card change they make; a
 *   status change rewrites the row under the same id (last write wins);
 * - never pruned: they are the history undo and review read;
 * - a corrupt row is skipped (left out of a listing, `null` from `getRevision`, `NotFound` from
 *   `requireRevision`), counted in `skippedRows` and warned about.
 */
export class RevisionRows {
  constructor(private readonly ctx: LedgerContext) {}

  async get(partition: string, id: string): Promise<Revision | null> {
    const item = await this.ctx.store.get(namespaceOf(this.ctx, partition, "revisions"), id);
    return item ? parseItem(this.ctx, RevisionSchema, item) : null;
  }

  /** @throws NotFound */
  async require(partition: string, id: string): Promise<Revision> {
    const revision = await this.get(partition, id);
    if (!revision) {
      throw new NotFound(`No revision "${id}" in partition "${partition}".`, { context: { id, partition } });
    }
    return revision;
  }

  /** Revisions, newest first, optionally of one tool and/or one status. */
  async list(partition: string, options: { tool?: string; status?: RevisionStatus }): Promise<Revision[]> {
    const items = await listNamespace(this.ctx, namespaceOf(this.ctx, partition, "revisions"));
    return parseItems(this.ctx, RevisionSchema, items)
      .filter(
        (r) =>
          (options.tool === undefined || r.tool === options.tool) &&
          (options.status === undefined || r.status === options.status),
      )
      .sort((a, b) => byId(b, a));
  }

  /**
   * The revisions as they are to be written (current schema version). Writes nothing.
   * @throws InvalidInput for a revision that does not match its schema.
   */
  next(revisions: readonly Revision[]): Revision[] {
    return revisions.map((r) => checked(RevisionSchema, { ...r, v: SCHEMA_VERSION }, `revision "${r.id}"`));
  }
}
