import type { Item } from "@langchain/langgraph";
import { InvalidInput, RevisionConflict } from "../../errors.js";
import { SCHEMA_VERSION, type ToolCard, ToolCardSchema } from "../schema.js";
import { checked, type LedgerContext, listNamespace, namespaceOf, parseItems } from "./store-io.js";

/**
 * Tool cards as stored (building and reading a card's text is `../cards.ts`).
 *
 * Key layout: `[root, partition, "cards"]`, key = the raw tool name (keys are not restricted) →
 * `ToolCard`.
 *
 * Invariants:
 * - written only through `commit` (with the revisions of the same change, in one store batch);
 *   every write bumps `version` and keeps the stored `createdAt`;
 * - `expectVersion` is a read-then-write check, not a lock: it catches a card edited since a
 *   revision was proposed, not two writers racing;
 * - a corrupt row is skipped (left out of a listing, `null` from `getCard`), counted in
 *   `skippedRows` and warned about; the next write of that tool replaces it as version 1.
 */
export class CardRows {
  constructor(private readonly ctx: LedgerContext) {}

  /** The cards of these tools in one store batch, in the order asked; a tool with no card is left out. */
  async get(partition: string, tools: readonly string[]): Promise<ToolCard[]> {
    if (tools.length === 0) return [];
    const namespace = namespaceOf(this.ctx, partition, "cards");
    const items = await this.ctx.store.batch(tools.map((key) => ({ namespace, key })));
    return parseItems(
      this.ctx,
      ToolCardSchema,
      items.filter((item): item is Item => item !== null),
    );
  }

  /** Every card of a partition, by name. */
  async list(partition: string): Promise<ToolCard[]> {
    const items = await listNamespace(this.ctx, namespaceOf(this.ctx, partition, "cards"));
    return parseItems(this.ctx, ToolCardSchema, items).sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * The cards as they are to be written at `now`: version bumped over the stored card, its
   * `createdAt` kept. Reads each stored card; writes nothing.
   * @throws InvalidInput for a card of another partition, or one that does not match its schema.
   * @throws RevisionConflict when `expectVersion` is given and a stored card is at another version.
   */
  async next(
    partition: string,
    cards: readonly ToolCard[],
    expectVersion: number | undefined,
    now: number,
  ): Promise<ToolCard[]> {
    const saved: ToolCard[] = [];
    for (const card of cards) {
      if (card.partition !== partition) {
        throw new InvalidInput(`Card "${card.name}" belongs to partition "${card.partition}", not "${partition}".`);
      }
      const [current] = await this.get(partition, [card.name]);
      if (expectVersion !== undefined && (current?.version ?? 0) !== expectVersion) {
        throw new RevisionConflict(
          `Card "${card.name}" is at version ${current?.version ?? 0}, expected ${expectVersion}: it was changed since.`,
          { context: { tool: card.name, partition } },
        );
      }
      const next = {
        ...card,
        v: SCHEMA_VERSION,
        version: (current?.version ?? 0) + 1,
        createdAt: current?.createdAt ?? card.createdAt ?? now,
        updatedAt: now,
      };
      saved.push(checked(ToolCardSchema, next, `the card of "${card.name}"`));
    }
    return saved;
  }
}
