import type { Item } from "@langchain/langgraph";
import { sortById } from "../../internal.js";
import { decodeLabel } from "../keys.js";
import { announcedWrite } from "../versions.js";
import {
  type EvaluatedCall,
  EvaluatedCallSchema,
  SCHEMA_VERSION,
  type ToolMemoryState,
  ToolMemoryStateSchema,
} from "../schema.js";
import {
  checked,
  type LedgerContext,
  type ListOptions,
  listAllNamespaces,
  listNamespace,
  namespaceOf,
  newest,
  parseItem,
  parseItems,
  pruneNamespace,
  putOp,
} from "./store-io.js";

/**
 * Tool memory: each tool's window of evaluated calls, and one state row per tool (how far its
 * call records were evaluated, and its guideline). Written by `src/memory`.
 *
 * Key layout:
 * - `[root, partition, "memory", tool]`, key = the call record's id → `EvaluatedCall`. One
 *   namespace per tool, so a window is read and slid without the others;
 * - `[root, partition, "guidelines"]`, key = the raw tool name → `ToolMemoryState`.
 *
 * Invariants:
 * - a window row is keyed by its call's id, so evaluating a call again overwrites its row, never
 *   doubles it. Rows are checked against their schema before anything of a batch is written
 *   (`InvalidInput`);
 * - a window is slid by {@link ToolMemoryRows.slide}: the rows beyond the newest `keep` (by id)
 *   are deleted, oldest first. A failed slide is warned about and returns 0, never thrown: the
 *   next slide removes them;
 * - a state row is written whole (last write wins): of two memory passes racing on one tool, the
 *   later row stays. A guideline lost that way is written again by the next summary, since the
 *   window then holds calls newer than the guideline that survived;
 * - a corrupt row is skipped (left out of the window; a corrupt state row reads as none), counted
 *   in `skippedRows` and warned about; the next write of that tool's state replaces it.
 */
export class ToolMemoryRows {
  constructor(private readonly ctx: LedgerContext) {}

  /**
   * Write evaluated calls (one store batch).
   * @throws InvalidInput when a row does not match its schema (nothing is written).
   */
  async putCalls(rows: readonly EvaluatedCall[]): Promise<EvaluatedCall[]> {
    if (rows.length === 0) return [];
    const saved = rows.map((row) =>
      checked(EvaluatedCallSchema, { ...row, v: SCHEMA_VERSION }, `an evaluated call of "${row.tool}"`),
    );
    await this.ctx.store.batch(saved.map((row) => putOp(this.ctx, row.partition, "memory", row.id, row, row.tool)));
    return saved;
  }

  /** A tool's window, oldest first. */
  async listCalls(partition: string, tool: string, options: ListOptions): Promise<EvaluatedCall[]> {
    const items = await listNamespace(this.ctx, namespaceOf(this.ctx, partition, "memory", tool));
    return newest(sortById(parseItems(this.ctx, EvaluatedCallSchema, items, options.after)), options.limit);
  }

  /** Delete a window's rows beyond the newest `keep`; how many went. */
  async slide(partition: string, tool: string, keep: number): Promise<number> {
    return pruneNamespace(this.ctx, namespaceOf(this.ctx, partition, "memory", tool), keep);
  }

  /** Tools with a memory window in a partition, sorted. */
  async tools(partition: string): Promise<string[]> {
    const prefix = namespaceOf(this.ctx, partition, "memory");
    const tools = new Set<string>();
    for (const ns of await listAllNamespaces(this.ctx, prefix)) {
      if (ns.length === prefix.length + 1 && prefix.every((label, i) => ns[i] === label)) {
        tools.add(decodeLabel(ns[prefix.length]));
      }
    }
    return [...tools].sort();
  }

  async getState(partition: string, tool: string): Promise<ToolMemoryState | null> {
    const item = await this.ctx.store.get(namespaceOf(this.ctx, partition, "guidelines"), tool);
    return item ? parseItem(this.ctx, ToolMemoryStateSchema, item) : null;
  }

  /** The state rows of these tools in one store batch, in the order asked (`null`: none). */
  async getStates(partition: string, tools: readonly string[]): Promise<(ToolMemoryState | null)[]> {
    if (tools.length === 0) return [];
    const namespace = namespaceOf(this.ctx, partition, "guidelines");
    const items = await this.ctx.store.batch(tools.map((key) => ({ namespace, key })));
    return items.map((item) => (item ? parseItem(this.ctx, ToolMemoryStateSchema, item as Item) : null));
  }

  /** Every tool's state row of a partition, by tool name. */
  async listStates(partition: string): Promise<ToolMemoryState[]> {
    const items = await listNamespace(this.ctx, namespaceOf(this.ctx, partition, "guidelines"));
    return parseItems(this.ctx, ToolMemoryStateSchema, items).sort((a, b) =>
      a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0,
    );
  }

  /**
   * Write a tool's state row whole, stamped with `v` and `updatedAt`.
   * @throws InvalidInput when it does not match its schema (nothing is written).
   */
  async putState(state: Omit<ToolMemoryState, "v" | "updatedAt">, guidelineChanged = true): Promise<ToolMemoryState> {
    const row = checked(
      ToolMemoryStateSchema,
      { ...state, v: SCHEMA_VERSION, updatedAt: Date.now() },
      `the memory state of "${state.tool}"`,
    );
    const write = () => this.ctx.store.batch([putOp(this.ctx, row.partition, "guidelines", row.tool, row)]);
    // Serving reads the guideline, not the evaluation watermark: a watermark moved alone announces nothing.
    if (guidelineChanged)
      await announcedWrite(this.ctx, [{ partition: row.partition, kind: "guidelines", tools: [row.tool] }], write);
    else await write();
    return row;
  }
}
