import { ReviewMarkSchema } from "../schema.js";
import { type LedgerContext, listNamespace, namespaceOf, parseItem } from "./store-io.js";

/**
 * Review watermarks: the newest call record id each tool's last review read, so a tool with no
 * new calls since costs no model call.
 *
 * Key layout: `[root, partition, "reviews"]`, key = the raw tool name → `{ through }`.
 *
 * Invariants:
 * - kept apart from the cards: marking a tool reviewed must not bump the card's version (undo
 *   compares versions);
 * - one row per tool, overwritten by each review (last write wins); never pruned;
 * - a corrupt row (no string `through`) is skipped, counted in `skippedRows` and warned about:
 *   that tool counts as never reviewed, and its next review overwrites the row.
 */
export class ReviewMarkRows {
  constructor(private readonly ctx: LedgerContext) {}

  /** Each tool's mark, by tool name. */
  async list(partition: string): Promise<Map<string, string>> {
    const items = await listNamespace(this.ctx, namespaceOf(this.ctx, partition, "reviews"));
    const marks = new Map<string, string>();
    for (const item of items) {
      const mark = parseItem(this.ctx, ReviewMarkSchema, item);
      if (mark) marks.set(item.key, mark.through);
    }
    return marks;
  }

  /** Record that each tool's review read everything up to its mark (one store batch). */
  async mark(partition: string, marks: ReadonlyMap<string, string>): Promise<void> {
    if (marks.size === 0) return;
    const ns = namespaceOf(this.ctx, partition, "reviews");
    await this.ctx.store.batch(
      [...marks].map(([tool, through]) => ({ namespace: ns, key: tool, value: { through }, index: false as const })),
    );
  }
}
