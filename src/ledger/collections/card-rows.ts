import type { Item } from "@langchain/langgraph";
import { InvalidInput } from "../../errors.js";
import { ExampleSourceSchema, SCHEMA_VERSION, type ToolCard, ToolCardSchema } from "../schema.js";
import { type CasCheck, casField } from "../cas.js";
import {
  checked,
  isEvery,
  isNum,
  isOptStr,
  isStr,
  type LedgerContext,
  listNamespace,
  namespaceOf,
  parseItem,
  parseItems,
} from "./store-io.js";

/**
 * Tool cards as stored (building and reading a card's text is `../cards.ts`).
 *
 * Key layout: `[root, partition, "cards"]`, key = the raw tool name (keys are not restricted) →
 * `ToolCard`.
 *
 * Invariants:
 * - written only through `commit` (with the revisions of the same change, in one store batch);
 *   every write bumps `version` and keeps the stored `createdAt`;
 * - every write is a compare-and-set on the version it read (`../cas.ts`), settled by the store
 *   (one transaction on SQLite and Postgres; in this process for other stores): of two writers
 *   that read the same version, one writes and the other gets `RevisionConflict` and writes
 *   nothing. `expectVersion` adds the caller's own expectation (the version a revision was
 *   proposed or applied at) on top;
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
      undefined,
      looksLikeCard,
    );
  }

  /** Every card of a partition, by name. */
  async list(partition: string): Promise<ToolCard[]> {
    const items = await listNamespace(this.ctx, namespaceOf(this.ctx, partition, "cards"));
    return parseItems(this.ctx, ToolCardSchema, items, undefined, looksLikeCard).sort((a, b) =>
      a.name.localeCompare(b.name),
    );
  }

  /**
   * The cards as they are to be written at `now` (version bumped over the stored card, its
   * `createdAt` kept), with the compare-and-set checks that the stored rows are still as read.
   * Reads the stored cards in one batch; writes nothing.
   * @throws InvalidInput for a card of another partition, or one that does not match its schema.
   * A card not at `expectVersion` (when given) gets a check that cannot hold.
   */
  async next(
    partition: string,
    cards: readonly ToolCard[],
    expectVersion: number | undefined,
    now: number,
  ): Promise<{ saved: ToolCard[]; checks: CasCheck[] }> {
    for (const card of cards) {
      if (card.partition !== partition) {
        throw new InvalidInput(`Card "${card.name}" belongs to partition "${card.partition}", not "${partition}".`);
      }
    }
    if (cards.length === 0) return { saved: [], checks: [] };
    const namespace = namespaceOf(this.ctx, partition, "cards");
    const items = await this.ctx.store.batch(cards.map((c) => ({ namespace, key: c.name })));
    const saved: ToolCard[] = [];
    const checks: CasCheck[] = [];
    cards.forEach((card, i) => {
      const item = items[i];
      const current = item ? parseItem(this.ctx, ToolCardSchema, item) : null;
      // A card not at `expectVersion` gets a check that cannot hold: the change fails in the
      // store with the other checks, so a lost race is reported by who won it (see `commit`).
      const expected = expectVersion === undefined || (current?.version ?? 0) === expectVersion;
      checks.push({
        namespace,
        key: card.name,
        field: "version",
        oneOf: expected ? [casField(item?.value, "version")] : [],
      });
      const next = {
        ...card,
        v: SCHEMA_VERSION,
        version: (current?.version ?? 0) + 1,
        createdAt: current?.createdAt ?? card.createdAt ?? now,
        updatedAt: now,
      };
      saved.push(checked(ToolCardSchema, next, `the card of "${card.name}"`));
    });
    return { saved, checks };
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isLine = (l: Record<string, unknown>): boolean => isStr(l.text) && isStr(l.revisionId);
const EXAMPLE_SOURCES: ReadonlySet<unknown> = new Set<unknown>(ExampleSourceSchema.options);

/**
 * A card as this version writes it (every field present with its type, defaults filled in), read
 * on every served turn: taken as stored instead of parsed again by zod (`parseItems`). Anything
 * else, an older or damaged row included, goes through the schema.
 */
export function looksLikeCard(v: Record<string, unknown>): boolean {
  const { author, augmented, learned } = v;
  return (
    v.v === SCHEMA_VERSION &&
    isStr(v.partition) &&
    isStr(v.name) &&
    (v.name as string).length > 0 &&
    Number.isInteger(v.version) &&
    (v.version as number) >= 1 &&
    isNum(v.createdAt) &&
    isNum(v.updatedAt) &&
    isOptStr(v.augmentationRefused) &&
    isObject(author) &&
    isStr(author.description) &&
    Array.isArray(author.argNames) &&
    author.argNames.every(isStr) &&
    (author.schema === null || isObject(author.schema)) &&
    (augmented === null || (isObject(augmented) && isStr(augmented.description) && isNum(augmented.at))) &&
    isObject(learned) &&
    isEvery(
      learned.examples,
      (e) => isStr(e.text) && EXAMPLE_SOURCES.has(e.source) && isOptStr(e.revisionId) && isNum(e.addedAt),
    ) &&
    isEvery(learned.notes, isLine) &&
    isEvery(learned.notFor, (l) => isLine(l) && isStr(l.tool)) &&
    (learned.exampleCall === null || (isObject(learned.exampleCall) && isLine(learned.exampleCall)))
  );
}
