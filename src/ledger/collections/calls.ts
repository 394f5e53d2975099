import type { PutOperation } from "@langchain/langgraph";
import { sortById } from "../../internal.js";
import { decodeLabel } from "../keys.js";
import { type CallRecord, CallRecordSchema, type NewRecord, SCHEMA_VERSION } from "../schema.js";
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
  listNamespacesOneBelow,
  listNamespace,
  listNewest,
  namespaceOf,
  newest,
  parseItems,
  PruneSchedule,
  pruneNamespace,
  putOp,
  stamp,
} from "./store-io.js";

/**
 * Call records: one row per tool call, the evidence every lesson rests on.
 *
 * Key layout: `[root, partition, "calls", tool]`, key = the record's time-ordered id →
 * `CallRecord`. One namespace per tool, so a tool's calls are read (and pruned) without the others.
 *
 * Invariants:
 * - append-only: a blind put under a fresh key, never read-modify-write, so concurrent writers in
 *   many processes never lose a record. A record that does not match its schema is refused
 *   (`InvalidInput`) before anything of its batch is written;
 * - pruned per tool to the newest `retainCallsPerTool` (by id) once at least
 *   `max(10, retainCallsPerTool / 4)` were appended through this ledger since its last prune; a
 *   failed prune is warned about and retried at the next threshold, never thrown into the append;
 * - a corrupt row is skipped, counted in `skippedRows` and warned about; it never fails a listing.
 */
export class CallRows {
  private readonly schedule = new PruneSchedule();

  constructor(
    private readonly ctx: LedgerContext,
    private readonly settings: SettingsRow,
  ) {}

  /** Append call records (one batch), then prune the tools that reached their threshold. */
  async append(records: NewRecord<CallRecord>[]): Promise<CallRecord[]> {
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
  stamp(records: readonly NewRecord<CallRecord>[]): CallRecord[] {
    return records.map((r) => stamp(CallRecordSchema, r));
  }

  /** The store's put of each stamped row. */
  puts(rows: readonly CallRecord[]): PutOperation[] {
    return rows.map((row) => putOp(this.ctx, row.partition, "calls", row.id, row, row.tool));
  }

  /** After rows were written: prune the tools that reached their threshold. */
  async appended(rows: readonly CallRecord[]): Promise<void> {
    const touched = new Map<string, { partition: string; tool: string; n: number }>();
    for (const row of rows) {
      const key = `${row.partition}\u0000${row.tool}`;
      const t = touched.get(key) ?? { partition: row.partition, tool: row.tool, n: 0 };
      t.n += 1;
      touched.set(key, t);
    }
    for (const [key, t] of touched) {
      const { retainCallsPerTool } = await this.settings.get(t.partition);
      if (this.schedule.due(key, t.n, Math.max(10, Math.ceil(retainCallsPerTool / 4)))) {
        await this.prune(t.partition, t.tool, retainCallsPerTool);
      }
    }
  }

  /**
   * Call records of one tool (or of every tool), oldest first. For one tool, `limit` and `after`
   * are answered by the store's index where it has one (SQLite, Postgres): the newest `limit`
   * cost `limit` rows to read, however many the tool has.
   */
  async list(partition: string, options: ListOptions & { tool?: string }): Promise<CallRecord[]> {
    if (options.tool !== undefined) {
      // One tool: its newest rows through the store's index (the window a review reads).
      const ns = namespaceOf(this.ctx, partition, "calls", options.tool);
      const items = await listNewest(this.ctx, ns, { limit: options.limit, after: options.after });
      return sortById(parseItems(this.ctx, CallRecordSchema, items, options.after, looksLikeCall));
    }
    // One search for every tool (a store scans per search): keep the rows one level below.
    const items = await listNamespace(this.ctx, namespaceOf(this.ctx, partition, "calls"), 1);
    return newest(sortById(parseItems(this.ctx, CallRecordSchema, items, options.after, looksLikeCall)), options.limit);
  }

  /** Tools that have call records in a partition, sorted. */
  async tools(partition: string): Promise<string[]> {
    const prefix = namespaceOf(this.ctx, partition, "calls");
    const namespaces = await listNamespacesOneBelow(this.ctx, prefix);
    return [...new Set(namespaces.map((ns) => decodeLabel(ns[prefix.length])))].sort();
  }

  /** Delete call records of one tool beyond the newest `keep`; how many went. */
  async prune(partition: string, tool: string, keep: number): Promise<number> {
    return pruneNamespace(this.ctx, namespaceOf(this.ctx, partition, "calls", tool), keep);
  }
}

/** A call record as this version writes it: every required field present with its type. */
export function looksLikeCall(v: Record<string, unknown>): boolean {
  return (
    v.v === SCHEMA_VERSION &&
    isStr(v.id) &&
    isStr(v.partition) &&
    isStr(v.tool) &&
    isStr(v.runId) &&
    isNum(v.at) &&
    isOutcome(v.outcome) &&
    isOptErrorClass(v.errorClass) &&
    isOptStr(v.errorMessage) &&
    isOptStr(v.errorAimed) &&
    isOptStr(v.requestId) &&
    isOptStr(v.threadId) &&
    (v.source === "callback" || v.source === "tool_message" || v.source === "api") &&
    Array.isArray(v.fingerprints) &&
    v.fingerprints.every(isStr) &&
    isEvery(v.args, (a) => isStr(a.name) && isStr(a.kind) && isStr(a.shape))
  );
}
