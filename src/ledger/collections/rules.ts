import { createHash } from "node:crypto";
import type { Item } from "@langchain/langgraph";
import { InvalidInput } from "../../errors.js";
import { announcedWrite } from "../versions.js";
import { type Rule, type RulePriority, RulePrioritySchema, RuleSchema, SCHEMA_VERSION } from "../schema.js";
import { checked, type LedgerContext, listNamespace, namespaceOf, parseItem } from "./store-io.js";

/** What a rule upsert takes: `id` and timestamps are optional. */
export type RuleInput = Omit<Rule, "v" | "id" | "partition" | "createdAt" | "updatedAt" | "tags"> & {
  id?: string;
  tags?: string[];
};

/** What a move of a rule to another partition may change on the way (see {@link RuleRows.move}). */
export type RuleMoveChanges = Partial<Pick<Rule, "tags" | "promotedBy">>;

/**
 * A rule's text as rules are compared: NFKC, lowercase, curly apostrophes straight, spacing
 * collapsed, closing punctuation dropped. Two texts with the same key are the same rule.
 */
export function ruleTextKey(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/\s+/g, " ")
    .replace(/[\s.!;:,]+$/, "")
    .trim();
}

/** Sixteen consonants: a rule id spells no word and holds no digit that could pass for data. */
const ID_LETTERS = "bcdfghjklmnpqrst";

/**
 * The id a rule gets when none is given: `rule-` and 16 letters of a hash of its tool and its
 * text (case, spacing and closing punctuation ignored). The same rule gets the same id in every
 * process, so re-capturing an edict updates its row instead of adding a second one, and two
 * processes upserting it at once write the same row. No digits: an id never looks like an order
 * number, a date or an amount.
 */
export function ruleId(tool: string, text: string): string {
  const digest = createHash("sha256").update(tool).update("\u0000").update(ruleTextKey(text)).digest();
  let letters = "";
  for (let i = 0; i < 8; i++) letters += ID_LETTERS[digest[i] >> 4] + ID_LETTERS[digest[i] & 15];
  return `rule-${letters}`;
}

const PRIORITY_RANK: Readonly<Record<RulePriority, number>> = Object.freeze(
  Object.fromEntries(RulePrioritySchema.options.map((p, i) => [p, i])) as Record<RulePriority, number>,
);

/** Listing order: priority (critical, high, normal), then the most recently updated first, then id. */
export function compareRules(a: Rule, b: Rule): number {
  return (
    PRIORITY_RANK[a.priority] - PRIORITY_RANK[b.priority] ||
    b.updatedAt - a.updatedAt ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/**
 * Tool-scoped rules (`tool` is `"*"` for an unscoped one).
 *
 * Key layout: `[root, partition, "rules"]`, key = the rule's id ({@link ruleId} of its tool and
 * text when none is given) → `Rule`.
 *
 * Invariants:
 * - `createdAt` and `updatedAt` are the store's own row times (`Item.createdAt`/`updatedAt`):
 *   the store sets the creation time when it inserts the row and never on an update, atomically
 *   in its own transaction (SQLite and Postgres: `INSERT … ON CONFLICT DO UPDATE` leaves
 *   `created_at` alone). So an upsert keeps `createdAt` even when two processes upsert the same
 *   rule at the same moment: both write one row (the id is deterministic), and whichever insert
 *   came first fixed its creation time. The value's own fields are the fallback for a store that
 *   reports no times. An upsert keeps `tags` when none are given;
 * - a blank tool or blank text, or a field that does not match the schema, is refused
 *   (`InvalidInput`), writing nothing;
 * - listed by priority, then the most recently updated first;
 * - never pruned; deleted only by `deleteRule` (or moved by `moveRule`);
 * - every write (put, delete, move) is announced in the partition's version once the store
 *   call is over (a move in both partitions: `../versions.ts`), so every process serving it
 *   reads the rules again on its next turn;
 * - a corrupt row is skipped (left out of a listing, `null` from `getRule`), counted in
 *   `skippedRows` and warned about; an upsert under its id replaces it.
 */
export class RuleRows {
  constructor(private readonly ctx: LedgerContext) {}

  /**
   * Write a rule, then read it back: the rule as stored, with the store's times.
   * @throws InvalidInput for a blank tool or blank text, or a rule that does not match its schema.
   */
  async put(partition: string, input: RuleInput): Promise<Rule> {
    if (!input.tool || !input.tool.trim()) throw new InvalidInput("A rule needs a tool name; got a blank one.");
    if (!input.rule || !input.rule.trim())
      throw new InvalidInput(`A rule for "${input.tool}" needs text; got a blank one.`);
    const now = Date.now();
    const id = input.id ?? ruleId(input.tool, input.rule);
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
    const ns = namespaceOf(this.ctx, partition, "rules");
    await announcedWrite(this.ctx, [{ partition, kind: "rules" }], () => this.ctx.store.put(ns, id, rule, false));
    return (await this.get(partition, id)) ?? rule;
  }

  async get(partition: string, id: string): Promise<Rule | null> {
    const item = await this.ctx.store.get(namespaceOf(this.ctx, partition, "rules"), id);
    return item ? this.parse(item) : null;
  }

  /** Rules of a partition (optionally of one tool), by priority, then the most recently updated first. */
  async list(partition: string, options: { tool?: string }): Promise<Rule[]> {
    const items = await listNamespace(this.ctx, namespaceOf(this.ctx, partition, "rules"));
    const rules: Rule[] = [];
    for (const item of items) {
      const rule = this.parse(item);
      if (rule !== null && (options.tool === undefined || rule.tool === options.tool)) rules.push(rule);
    }
    return rules.sort(compareRules);
  }

  /** Whether there was a row (even a corrupt one) to delete. */
  async delete(partition: string, id: string): Promise<boolean> {
    const ns = namespaceOf(this.ctx, partition, "rules");
    const existed = (await this.ctx.store.get(ns, id)) !== null;
    if (existed) await announcedWrite(this.ctx, [{ partition, kind: "rules" }], () => this.ctx.store.delete(ns, id));
    return existed;
  }

  /**
   * Move a rule to another partition under the same id, in one store batch (one transaction on
   * `SqliteStore` and on the store `openPostgresStore` returns): written there, deleted here.
   * A rule already there under that id is updated (its `createdAt` kept). Returns the rule as
   * stored there, or `null` when there is no (readable) rule to move.
   * @throws InvalidInput when both partitions are the same, or the moved rule does not match its schema.
   */
  async move(from: string, id: string, to: string, changes: RuleMoveChanges): Promise<Rule | null> {
    if (from === to) throw new InvalidInput(`Rule ${id} is already in partition "${to}".`);
    const rule = await this.get(from, id);
    if (!rule) return null;
    const existing = await this.get(to, id);
    const now = Date.now();
    const moved = checked(
      RuleSchema,
      { ...rule, ...changes, partition: to, createdAt: existing?.createdAt ?? now, updatedAt: now },
      `the rule ${id}`,
    );
    await announcedWrite(
      this.ctx,
      [
        { partition: to, kind: "rules" },
        { partition: from, kind: "rules" },
      ],
      () =>
        this.ctx.store.batch([
          { namespace: namespaceOf(this.ctx, to, "rules"), key: id, value: moved, index: false },
          { namespace: namespaceOf(this.ctx, from, "rules"), key: id, value: null },
        ]),
    );
    return (await this.get(to, id)) ?? moved;
  }

  /** A stored row through the schema, its times the store's own; `null` (counted, warned) when it does not fit. */
  private parse(item: Item): Rule | null {
    const rule = parseItem(this.ctx, RuleSchema, item);
    if (rule === null) return null;
    return {
      ...rule,
      createdAt: storeTime(item.createdAt, rule.createdAt),
      updatedAt: storeTime(item.updatedAt, rule.updatedAt),
    };
  }
}

/** Milliseconds of a store timestamp, or `fallback` when the store gave none that reads as a time. */
function storeTime(value: unknown, fallback: number): number {
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === "string" || typeof value === "number"
        ? new Date(value).getTime()
        : Number.NaN;
  return Number.isFinite(ms) ? ms : fallback;
}
