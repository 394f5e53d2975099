import type { PutOperation } from "@langchain/langgraph";
import type { z } from "zod";
import { sortById } from "../../internal.js";
import {
  type NewRecord,
  type RouteRecord,
  RouteRecordSchema,
  SCHEMA_VERSION,
  type TurnRecord,
  TurnRecordSchema,
} from "../schema.js";
import type { SettingsRow } from "./settings.js";
import {
  appendPuts,
  isEvery,
  isNum,
  isOptErrorClass,
  isOptStr,
  isOutcome,
  isStr,
  type LedgerContext,
  type ListOptions,
  listNewest,
  namespaceOf,
  parseItems,
  PruneSchedule,
  pruneNamespace,
  putOp,
  stamp,
} from "./store-io.js";

/**
 * The two per-request collections, joined on `requestId`: turn records (what a run did for one
 * request) and route records (what routing offered for it).
 *
 * Key layout: `[root, partition, "turns"]` and `[root, partition, "routes"]`, key = the record's
 * time-ordered id → `TurnRecord` / `RouteRecord`.
 *
 * Invariants (the same for both):
 * - append-only: blind puts under fresh keys, never read-modify-write, so concurrent writers
 *   never lose a record. A record that does not match its schema is refused (`InvalidInput`)
 *   before anything of its batch is written;
 * - pruned per partition to the newest `retainTurns` (by id) once at least
 *   `max(100, retainTurns / 10)` were appended through this ledger since its last prune; a failed
 *   prune is warned about and retried at the next threshold, never thrown into the append;
 * - a corrupt row is skipped, counted in `skippedRows` and warned about; it never fails a listing.
 */
export class RequestRows<T extends TurnRecord | RouteRecord> {
  private readonly schedule = new PruneSchedule();

  /** The turn records of a ledger. */
  static turns(ctx: LedgerContext, settings: SettingsRow): RequestRows<TurnRecord> {
    return new RequestRows(ctx, settings, "turns", TurnRecordSchema, looksLikeTurn);
  }

  /** The route records of a ledger. */
  static routes(ctx: LedgerContext, settings: SettingsRow): RequestRows<RouteRecord> {
    return new RequestRows(ctx, settings, "routes", RouteRecordSchema, looksLikeRoute);
  }

  private constructor(
    private readonly ctx: LedgerContext,
    private readonly settings: SettingsRow,
    private readonly collection: "turns" | "routes",
    private readonly schema: z.ZodType<T>,
    private readonly looksValid: (value: Record<string, unknown>) => boolean,
  ) {}

  /** Append records (one batch), then prune the partitions that reached their threshold. */
  async append(records: NewRecord<T>[]): Promise<T[]> {
    if (records.length === 0) return [];
    const rows = this.stamp(records);
    await appendPuts(this.ctx, this.puts(rows));
    await this.appended(rows);
    return rows;
  }

  /**
   * Records as stored (version, id and time assigned when absent), checked against the schema.
   * @throws InvalidInput when one does not match (nothing is written).
   */
  stamp(records: readonly NewRecord<T>[]): T[] {
    return records.map((r) => stamp(this.schema, r));
  }

  /** The store's put of each stamped row. */
  puts(rows: readonly T[]): PutOperation[] {
    return rows.map((row) => putOp(this.ctx, row.partition, this.collection, row.id, row));
  }

  /** After rows were written: prune the partitions that reached their threshold. */
  async appended(rows: readonly T[]): Promise<void> {
    const counts = new Map<string, number>();
    for (const row of rows) counts.set(row.partition, (counts.get(row.partition) ?? 0) + 1);
    for (const [partition, n] of counts) {
      const { retainTurns } = await this.settings.get(partition);
      if (this.schedule.due(partition, n, Math.max(100, Math.ceil(retainTurns / 10)))) {
        await pruneNamespace(this.ctx, namespaceOf(this.ctx, partition, this.collection), retainTurns);
      }
    }
  }

  /**
   * Records of a partition, oldest first. `limit` and `after` are answered by the store's index
   * where it has one (SQLite, Postgres): the newest `limit` cost `limit` rows to read.
   */
  async list(partition: string, options: ListOptions): Promise<T[]> {
    const ns = namespaceOf(this.ctx, partition, this.collection);
    const items = await listNewest(this.ctx, ns, { limit: options.limit, after: options.after });
    return sortById(parseItems(this.ctx, this.schema, items, options.after, this.looksValid));
  }
}

function looksLikeRequestRow(v: Record<string, unknown>): boolean {
  return (
    v.v === SCHEMA_VERSION &&
    isStr(v.id) &&
    isStr(v.partition) &&
    isStr(v.requestId) &&
    isNum(v.at) &&
    isOptStr(v.threadId)
  );
}

/** A turn record as this version writes it: every required field present with its type. */
export function looksLikeTurn(v: Record<string, unknown>): boolean {
  return (
    looksLikeRequestRow(v) &&
    isStr(v.request) &&
    isOptStr(v.requestAimed) &&
    isOptStr(v.servedBy) &&
    isEvery(v.calls, (c) => isStr(c.tool) && isOutcome(c.outcome) && isOptErrorClass(c.errorClass))
  );
}

/** A route record as this version writes it: every required field present with its type. */
export function looksLikeRoute(v: Record<string, unknown>): boolean {
  return (
    looksLikeRequestRow(v) &&
    isOptStr(v.request) &&
    typeof v.allSent === "boolean" &&
    Number.isInteger(v.k) &&
    isEvery(v.offered, (o) => isStr(o.tool) && Number.isInteger(o.rank) && (o.rank as number) >= 1 && isNum(o.score))
  );
}
