import { z } from "zod";
import { ReviewMarkSchema } from "../schema.js";
import { type LedgerContext, listNamespace, namespaceOf, parseItem } from "./store-io.js";

/**
 * Review watermarks: the newest call record id each tool's last review read, so a tool with no
 * new calls since costs no model call.
 *
 * Key layout: `[root, partition, "reviews"]`, key = the raw tool name → `{ through }`; the
 * wordings gate (what routing may learn wordings from, see `learn/review/guard.ts`) is the one row
 * of `[root, partition, "reviews", "gate"]`, key `wordings`.
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

/** The wordings gate row: per tool, the newest turn record id routing may take its wordings from, and the last guard verdict. */
export const WordingsGateSchema = z.object({
  tools: z.record(z.string(), z.string()),
  /**
   * What the gate's ids are: turn record ids, which sort by time. A gate without it (written
   * before, with request ids, which do not) is read as a gate that lets nothing in yet.
   */
  order: z.literal("turn-id").optional(),
  /** The last review's verdict (JSON of the guard's verdict, for the operator). */
  verdict: z.unknown().optional(),
  at: z.number().optional(),
});
export type WordingsGate = z.infer<typeof WordingsGateSchema>;

const GATE_LABEL = "gate";
const GATE_KEY = "wordings";

/**
 * The wordings gate of a partition (null before its first guarded review; a corrupt row counts as
 * none). A gate of request ids (before `order`) comes back with no tools: nothing let in until
 * the next review's guard.
 */
export async function readWordingsGate(ctx: LedgerContext, partition: string): Promise<WordingsGate | null> {
  const item = await ctx.store.get(namespaceOf(ctx, partition, "reviews", GATE_LABEL), GATE_KEY);
  const gate = item ? parseItem(ctx, WordingsGateSchema, item) : null;
  if (gate && gate.order !== "turn-id") {
    const { at: _at, ...rest } = gate;
    return { ...rest, tools: {}, order: "turn-id" };
  }
  return gate;
}

/** Write the wordings gate of a partition (last write wins). */
export async function writeWordingsGate(ctx: LedgerContext, partition: string, gate: WordingsGate): Promise<void> {
  await ctx.store.put(namespaceOf(ctx, partition, "reviews", GATE_LABEL), GATE_KEY, gate, false);
}
