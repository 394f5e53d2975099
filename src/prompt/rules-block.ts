/**
 * The pinned `## Tool-scoped rules` block of the system prompt: every critical and high rule of
 * the tools at hand, grouped per tool, critical first. Byte-stable: the same rules give the same
 * bytes whatever order they come in (a provider's prompt cache keeps the prefix), and nothing in
 * it changes when a rule is merely re-upserted. Critical rules are never dropped, whatever the
 * cap; when the cap cuts high rules, the block says how many and how to recall them.
 */
import { createHash } from "node:crypto";
import { byId, oneLine } from "../internal.js";
import {
  isPinned,
  isUnscoped,
  RECALL_TOOL_NAME,
  type Rule,
  ruleTextKey,
  type RuleView,
  SHARED_SCOPE,
  scopeOf,
} from "../rules/model.js";

/** The heading the block starts with. */
export const RULES_BLOCK_HEADING = "## Tool-scoped rules";

/** The block's one fixed preamble. */
export const RULES_BLOCK_PREAMBLE =
  "The user or an operator set these rules for the tools below. Check them before you choose or call a tool. " +
  "Never break a critical rule: if a request would break one, do not make the call; say which rule stops you.";

/** Options of {@link renderRulesBlock}. */
export interface RulesBlockOptions {
  /**
   * The tools whose rules the block holds (the registered or routed tools); rules of other tools
   * are left out.
   * @default every tool the rules name
   */
  tools?: readonly string[];
  /**
   * Most rules the block lists. Critical rules are listed even past it; high rules fill what is
   * left, newest first, and the block says how many of each tool's were left out.
   * @default 30
   */
  maxRules?: number;
  /**
   * The tool the "N more" line tells the model to call.
   * @default RECALL_TOOL_NAME ("recall_tool_rules")
   */
  recallTool?: string;
}

/** The defaults of {@link RulesBlockOptions} (`tools` has none: every tool the rules name). */
export const DEFAULT_RULES_BLOCK: Readonly<Required<Omit<RulesBlockOptions, "tools">>> = Object.freeze({
  maxRules: 30,
  recallTool: RECALL_TOOL_NAME,
});

/** A rule as the block lists it. */
export type PinnedRule = Pick<RuleView, "id" | "tool" | "rule" | "priority" | "source" | "scope">;

/** The rendered block and what it holds. */
export interface RulesBlock {
  /** The block's markdown, to append to a system prompt; `""` when no rule is pinned. */
  text: string;
  /** The rules listed, in the order shown. */
  shown: PinnedRule[];
  /** Per tool, how many pinned (high) rules the cap left out, by tool name. */
  omitted: { tool: string; count: number }[];
  /** A hash of `text`: equal digests, equal bytes (e.g. to render once per thread until it changes). */
  digest: string;
}

/**
 * Render the pinned rules of `rules` (critical and high, scoped to a tool; see `isPinned`) as
 * the `## Tool-scoped rules` block. Tools in name order; per tool, critical then high rules,
 * each oldest first. A rule listed twice (the same id, or the same text for the same tool, e.g.
 * in the caller's partition and the shared scope) is listed once. Pure.
 */
export function renderRulesBlock(rules: readonly Rule[], options: RulesBlockOptions = {}): RulesBlock {
  const maxRules = Math.max(0, options.maxRules ?? DEFAULT_RULES_BLOCK.maxRules);
  const recallTool = options.recallTool ?? DEFAULT_RULES_BLOCK.recallTool;
  const wanted = options.tools === undefined ? undefined : new Set(options.tools);
  const pinned = unique(
    rules.filter((r) => isPinned(r) && !isUnscoped(r) && (wanted === undefined || wanted.has(r.tool))),
  );
  const critical = pinned.filter((r) => r.priority === "critical");
  const high = pinned.filter((r) => r.priority !== "critical").sort(newestFirst);
  const room = Math.max(0, maxRules - critical.length);
  const kept = [...critical, ...high.slice(0, room)];
  const omittedBy = new Map<string, number>();
  for (const r of high.slice(room)) omittedBy.set(r.tool, (omittedBy.get(r.tool) ?? 0) + 1);

  const byTool = new Map<string, Rule[]>();
  for (const r of kept) {
    const list = byTool.get(r.tool);
    if (list) list.push(r);
    else byTool.set(r.tool, [r]);
  }
  const tools = [...new Set([...byTool.keys(), ...omittedBy.keys()])].sort(byName);
  const lines: string[] = [];
  const shown: PinnedRule[] = [];
  for (const tool of tools) {
    lines.push("", `### \`${oneLine(tool)}\``);
    for (const rule of (byTool.get(tool) ?? []).sort(shownOrder)) {
      lines.push(`- [${rule.priority}] ${oneLine(rule.rule)}`);
      shown.push({
        id: rule.id,
        tool,
        rule: rule.rule,
        priority: rule.priority,
        source: rule.source,
        scope: scopeOf(rule),
      });
    }
    const left = omittedBy.get(tool);
    if (left !== undefined) {
      lines.push(`- ${left} more; recall them with ${recallTool}(${JSON.stringify({ tool })}).`);
    }
  }
  const text = lines.length === 0 ? "" : `${RULES_BLOCK_HEADING}\n${RULES_BLOCK_PREAMBLE}\n${lines.join("\n")}\n`;
  const omitted = [...omittedBy.entries()]
    .map(([tool, count]) => ({ tool, count }))
    .sort((a, b) => byName(a.tool, b.tool));
  return { text, shown, omitted, digest: createHash("sha256").update(text).digest("hex").slice(0, 16) };
}

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Critical before high, then oldest first: adding a rule appends to its group. */
function shownOrder(a: Rule, b: Rule): number {
  const rank = (r: Rule) => (r.priority === "critical" ? 0 : 1);
  return rank(a) - rank(b) || a.createdAt - b.createdAt || byId(a, b);
}

/** Which high rules the cap keeps: the newest. */
function newestFirst(a: Rule, b: Rule): number {
  return b.createdAt - a.createdAt || byId(a, b);
}

/**
 * One of each rule: by tool and id, then by tool and text as rules are compared (case, spacing,
 * closing punctuation ignored: `ruleTextKey`); critical first, then the partition's copy, then the oldest.
 */
function unique(rules: readonly Rule[]): Rule[] {
  const shared = (r: Rule) => (r.partition === SHARED_SCOPE ? 1 : 0);
  const ordered = [...rules].sort(
    (a, b) =>
      (a.priority === "critical" ? 0 : 1) - (b.priority === "critical" ? 0 : 1) ||
      shared(a) - shared(b) ||
      a.createdAt - b.createdAt ||
      byId(a, b),
  );
  const seen = new Set<string>();
  const out: Rule[] = [];
  for (const rule of ordered) {
    const byKey = `${rule.tool}\u0000${rule.id}`;
    const byText = `${rule.tool}\u0001${ruleTextKey(rule.rule)}`;
    if (seen.has(byKey) || seen.has(byText)) continue;
    seen.add(byKey);
    seen.add(byText);
    out.push(rule);
  }
  return out;
}

// ---------------------------------------------------------------- once per thread

/** Options of {@link RulesBlockCache}. */
export interface RulesBlockCacheOptions {
  /**
   * Most threads whose block is kept; past it, the least recently served thread's is dropped
   * (rendered again if that thread comes back).
   * @default 1000
   */
  maxThreads?: number;
  /**
   * What renders a block (a seam for tests and wrappers).
   * @default renderRulesBlock
   */
  render?: (rules: readonly Rule[], options: RulesBlockOptions) => RulesBlock;
}

/** The defaults of {@link RulesBlockCacheOptions}. */
export const DEFAULT_RULES_BLOCK_CACHE: Readonly<Required<RulesBlockCacheOptions>> = Object.freeze({
  maxThreads: 1000,
  render: renderRulesBlock,
});

/** Whose block {@link RulesBlockCache.serve} serves, and the write counts read before the rules were. */
export interface RulesBlockRequest {
  /** The caller's partition. */
  partition: string;
  /** The conversation thread (e.g. LangGraph's `thread_id`). */
  threadId: string;
  /**
   * This process's rule-write counts of the partitions the rules were read from (the caller's
   * and the shared scope), read before the rules: any change re-renders.
   */
  writeVersions: readonly number[];
}

interface CachedBlock {
  stamp: string;
  block: RulesBlock;
}

/**
 * What decides whether a cached block still holds: the block options (tools as a set, cap,
 * recall tool), this process's write counts, and, of the rules that can reach the block (pinned,
 * scoped, of the tools), how many there are and the newest `updatedAt` (how another process's
 * write shows: a put or a move stamps the row with a newer time, a delete lowers the count). Pure.
 */
export function rulesBlockStamp(
  rules: readonly Rule[],
  options: RulesBlockOptions,
  writeVersions: readonly number[],
): string {
  const tools = options.tools === undefined ? null : [...new Set(options.tools)].sort(byName);
  const wanted = tools === null ? undefined : new Set(tools);
  let count = 0;
  let newest = 0;
  for (const r of rules) {
    if (!isPinned(r) || isUnscoped(r) || (wanted !== undefined && !wanted.has(r.tool))) continue;
    count += 1;
    if (r.updatedAt > newest) newest = r.updatedAt;
  }
  return JSON.stringify([
    tools,
    options.maxRules ?? DEFAULT_RULES_BLOCK.maxRules,
    options.recallTool ?? DEFAULT_RULES_BLOCK.recallTool,
    writeVersions,
    count,
    newest,
  ]);
}

/**
 * The pinned block rendered once per thread: a thread's later turns get the very same block
 * (same object, same bytes, so a provider's prompt cache keeps the prefix) until a rule that
 * could change it is written (see {@link rulesBlockStamp}); then it is rendered anew. One entry
 * per partition and thread, least recently served dropped past `maxThreads`. A thread of one
 * partition never gets another partition's block: the partition is part of the key. The blocks
 * it serves are frozen, as they are shared by every later turn of the thread.
 */
export class RulesBlockCache {
  private readonly maxThreads: number;
  private readonly render: (rules: readonly Rule[], options: RulesBlockOptions) => RulesBlock;
  /** Insertion order is recency: a served entry is moved to the end. */
  private readonly entries = new Map<string, CachedBlock>();

  constructor(options: RulesBlockCacheOptions = {}) {
    this.maxThreads = Math.max(1, options.maxThreads ?? DEFAULT_RULES_BLOCK_CACHE.maxThreads);
    this.render = options.render ?? DEFAULT_RULES_BLOCK_CACHE.render;
  }

  /** How many threads have a block kept. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The thread's block for these rules: the kept one when its stamp still holds, else rendered
   * (and kept in its place).
   */
  serve(request: RulesBlockRequest, rules: readonly Rule[], options: RulesBlockOptions = {}): RulesBlock {
    const key = JSON.stringify([request.partition, request.threadId]);
    const stamp = rulesBlockStamp(rules, options, request.writeVersions);
    const kept = this.entries.get(key);
    this.entries.delete(key);
    const entry =
      kept !== undefined && kept.stamp === stamp ? kept : { stamp, block: frozen(this.render(rules, options)) };
    this.entries.set(key, entry);
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxThreads) break;
      this.entries.delete(oldest);
    }
    return entry.block;
  }

  /** Forget every kept block. */
  clear(): void {
    this.entries.clear();
  }
}

/** A block frozen through its arrays and their items: a served block is shared by a thread's turns. */
function frozen(block: RulesBlock): RulesBlock {
  for (const r of block.shown) Object.freeze(r);
  for (const o of block.omitted) Object.freeze(o);
  Object.freeze(block.shown);
  Object.freeze(block.omitted);
  return Object.freeze(block);
}
