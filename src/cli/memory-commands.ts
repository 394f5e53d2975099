/**
 * The tool-memory commands: `memory TOOL` (a tool's guideline and statistics block) and
 * `stats [TOOL]` (the statistics of one tool's memory window, or of every tool's). With
 * `--refresh` they first run a memory pass with the deterministic evaluator (and, for `memory`,
 * the deterministic synthesis): the CLI holds no model.
 */
import { NotFound } from "../errors.js";
import type { ToolMemoryReport } from "../learn/manager.js";
import type { ToolStats } from "../ledger/schema.js";
import { renderGuideline, renderStatsBlock } from "../prompt/memory.js";
import { flag, nonEmpty, parseCommandArgs, parseSettingAssignments, stringList } from "./args.js";
import {
  EXIT_HELP,
  json,
  JSON_OPTION,
  LEDGER_HELP,
  LEDGER_OPTIONS,
  PARTITION_HELP,
  type Session,
  withLedger,
} from "./ledger-session.js";
import { table, when } from "./format.js";
import { type Command, EXIT, println } from "./io.js";

const MEMORY_OPTIONS = {
  ...LEDGER_OPTIONS,
  ...JSON_OPTION,
  refresh: { type: "boolean" as const },
  set: { type: "string" as const, multiple: true },
};

const REFRESH_HELP = `  --refresh               evaluate new calls first (deterministic evaluator)`;
const SET_HELP = `  --set key=value         a setting for this run only (repeatable), e.g. --set minEvaluatedCalls=5`;

/** A tool's memory in lines for a person: the guideline with its statistics, or why there is none. */
export function renderToolMemory(memory: ToolMemoryReport): string[] {
  const out: string[] = [];
  const g = memory.guideline;
  if (g) {
    out.push(
      `${memory.tool}: guideline written ${when(g.at)} by ${g.synthesizer}`,
      "",
      renderGuideline(memory.tool, g),
    );
    if (g.refused.length > 0) {
      out.push("", `Refused by the vet (${g.refused.length}):`);
      for (const r of g.refused)
        out.push(`  - ${JSON.stringify(r.text)}: ${r.reason}${r.detail ? ` (${r.detail})` : ""}`);
    }
    if (memory.stale) {
      out.push(
        "",
        `The window has evaluated calls this guideline was not written from (now ${memory.stats.totalCalls}); \`--refresh\` writes it again.`,
      );
    }
    return out;
  }
  const recent = memory.stats.recentCalls;
  out.push(
    memory.stats.totalCalls === 0
      ? `${memory.tool}: no evaluated calls yet; \`--refresh\` evaluates the recorded ones.`
      : `${memory.tool}: not enough data for a guideline: ${recent} evaluated call(s) in the recent window; it needs ${memory.minEvaluatedCalls}.`,
    "",
    renderStatsBlock(memory.stats),
  );
  return out;
}

const pct = (rate: number | null) => (rate === null ? "-" : `${Math.round(rate * 100)}%`);
const num = (value: number | null, digits = 2) => (value === null ? "-" : value.toFixed(digits));

/** The statistics of many tools as one table. */
export function renderStatsTable(partition: string, rows: readonly { tool: string; stats: ToolStats }[]): string[] {
  if (rows.length === 0) {
    return [`no evaluated calls in partition "${partition}" yet; \`tool-lessons stats --refresh\` evaluates them`];
  }
  return table(
    ["tool", "calls", "recent", "success", "recent", "score", "recent", "avg ms", "avg tokens"],
    rows.map(({ tool, stats: s }) => [
      tool,
      String(s.totalCalls),
      String(s.recentCalls),
      pct(s.successRate),
      pct(s.recentSuccessRate),
      num(s.avgScore),
      num(s.recentAvgScore),
      num(s.avgLatencyMs, 0),
      num(s.avgTokens, 0),
    ]),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
}

/** A tool the partition knows: a card, call records or a memory window; else `NotFound`. */
async function requireKnownTool({ ledger, partition }: Session, tool: string): Promise<void> {
  const [card, calls, window] = await Promise.all([
    ledger.getCard(partition, tool),
    ledger.listCalls(partition, { tool, limit: 1 }),
    ledger.listEvaluatedCalls(partition, tool, { limit: 1 }),
  ]);
  if (!card && calls.length === 0 && window.length === 0) {
    throw new NotFound(
      `No tool "${tool}" in partition "${partition}": no card, no recorded call; \`tool-lessons cards\` lists the registered ones.`,
    );
  }
}

const memory: Command = {
  name: "memory",
  summary: "a tool's guideline (what it is for, what works, common issues, best practices) and statistics",
  help: `Usage: tool-lessons memory TOOL [--refresh] [--set key=value ...] [--json]

Shows what tool memory holds for TOOL: its guideline, written from its recent evaluated calls, and
the statistics block the model is shown with it; or why it has none yet.

Options:
  --refresh               evaluate new calls, then write the guideline again if the window has
                          calls it was not written from (deterministic evaluator and synthesis)
${SET_HELP}
  --json                  print the tool's memory as JSON (statistics, guideline, rendered text)
${PARTITION_HELP}
${LEDGER_HELP}

${EXIT_HELP}

Example:
  tool-lessons memory search_docs --refresh
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(argv, MEMORY_OPTIONS, { min: 1, max: 1, name: "a tool name" });
    const tool = nonEmpty(positionals[0], "the tool name")!;
    const config = parseSettingAssignments(stringList(values, "set"), "--set");
    return withLedger(values, io, async (session) => {
      await requireKnownTool(session, tool);
      const { manager, partition } = session;
      if (flag(values, "refresh")) await manager.summarize([tool], { partition, config });
      const report = await manager.memoryFor(tool, { partition, config });
      if (flag(values, "json")) json(io, report);
      else println(io.stdout, renderToolMemory(report));
      return EXIT.ok;
    });
  },
};

const stats: Command = {
  name: "stats",
  summary: "statistics of tool memory: calls, success rate, average score, time and tokens",
  help: `Usage: tool-lessons stats [TOOL] [--refresh] [--set key=value ...] [--json]

Statistics of the evaluated calls in memory, computed by code: calls in the window and recent ones,
success rate and average score (overall and recent), average time and tokens. With TOOL, that
tool's statistics block; without, one row per tool with a memory window.

Options:
${REFRESH_HELP}
${SET_HELP}
  --json                  print the statistics as JSON
${PARTITION_HELP}
${LEDGER_HELP}

${EXIT_HELP}

Example:
  tool-lessons stats --refresh
  tool-lessons stats search_docs --json
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(argv, MEMORY_OPTIONS, { min: 0, max: 1 });
    const tool = nonEmpty(positionals[0], "the tool name");
    const config = parseSettingAssignments(stringList(values, "set"), "--set");
    return withLedger(values, io, async (session) => {
      const { ledger, manager, partition } = session;
      if (tool !== undefined) await requireKnownTool(session, tool);
      if (flag(values, "refresh")) {
        await manager.evaluateCalls({ partition, config, ...(tool !== undefined ? { tools: [tool] } : {}) });
      }
      if (tool !== undefined) {
        const s = await manager.stats(tool, { partition, config });
        if (flag(values, "json")) json(io, { tool, ...s });
        else println(io.stdout, [`${tool}:`, renderStatsBlock(s)]);
        return EXIT.ok;
      }
      const tools = await ledger.listMemoryTools(partition);
      const rows = await Promise.all(
        tools.map(async (t) => ({ tool: t, stats: await manager.stats(t, { partition, config }) })),
      );
      if (flag(values, "json"))
        json(
          io,
          rows.map((r) => ({ tool: r.tool, ...r.stats })),
        );
      else println(io.stdout, renderStatsTable(partition, rows));
      return EXIT.ok;
    });
  },
};

/** The tool-memory commands, in the order `--help` lists them. */
export const MEMORY_COMMANDS: readonly Command[] = [memory, stats];
