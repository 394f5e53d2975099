import { InvalidInput } from "../../errors.js";
import { byId } from "../../internal.js";
import { timeOrderedId } from "../keys.js";
import { type Rule, RuleSchema, SCHEMA_VERSION } from "../schema.js";
import { checked, type LedgerContext, listNamespace, namespaceOf, parseItem, parseItems } from "./store-io.js";

/** What a rule upsert takes: `id` and timestamps are optional. */
export type RuleInput = Omit<Rule, "v" | "id" | "partition" | "createdAt" | "updatedAt" | "tags"> & {
  id?: string;
  tags?: string[];
};

/**
 * Tool-scoped rules (`tool` is "" for an unscoped one).
 *
 * Key layout: `[root, partition, "rules"]`, key = the rule's id (time-ordered when the ledger
 * made it) → `Rule`.
 *
 * Invariants:
 * - an upsert keeps the stored `createdAt` (and `tags`, when none are given); it reads then
 *   writes, so of two concurrent upserts of one id the last write wins;
 * - a blank tool or blank text, or a field that does not match the schema, is refused
 *   (`InvalidInput`), writing nothing;
 * - never pruned; deleted only by `deleteRule`;
 * - a corrupt row is skipped (left out of a listing, `null` from `getRule`), counted in
 *   `skippedRows` and warned about; an upsert under its id replaces it.
 */
export class RuleRows {
  constructor(private readonly ctx: LedgerContext) {}

  /** @throws InvalidInput for a blank tool or blank text, or a rule that does not match its schema. */
  async put(partition: string, input: RuleInput): Promise<Rule> {
    if (!input.tool || !input.tool.trim()) throw new InvalidInput("A rule needs a tool name; got a blank one.");
    if (!input.rule || !input.rule.trim())
      throw new InvalidInput(`A rule for "${input.tool}" needs text; got a blank one.`);
    const now = Date.now();
    const id = input.id ?? timeOrderedId(now);
    const existing = await this.get(partition, id);
    const next = {
      ...input,
      v: SCHEMA_VERSION,
      id,
      partition,
      tags: input.tags ?? existing?.tags ?? [],
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    const rule = checked(RuleSchema, next, `a rule for "${input.tool}"`);
    await this.ctx.store.put(namespaceOf(this.ctx, partition, "rules"), id, rule);
    return rule;
  }

  async get(partition: string, id: string): Promise<Rule | null> {
    const item = await this.ctx.store.get(namespaceOf(this.ctx, partition, "rules"), id);
    return item ? parseItem(this.ctx, RuleSchema, item) : null;
  }

  /** Rules of a partition (optionally of one tool), by id. */
  async list(partition: string, options: { tool?: string }): Promise<Rule[]> {
    const items = await listNamespace(this.ctx, namespaceOf(this.ctx, partition, "rules"));
    return parseItems(this.ctx, RuleSchema, items)
      .filter((r) => options.tool === undefined || r.tool === options.tool)
      .sort(byId);
  }

  /** Whether there was a row (even a corrupt one) to delete. */
  async delete(partition: string, id: string): Promise<boolean> {
    const ns = namespaceOf(this.ctx, partition, "rules");
    const existed = (await this.ctx.store.get(ns, id)) !== null;
    if (existed) await this.ctx.store.delete(ns, id);
    return existed;
  }
}
