import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerTools } from "../../src/learn/register.js";
import { openLedger } from "../../src/ledger/open.js";
import type { CallRecord, NewRecord } from "../../src/ledger/schema.js";
import { runCli, tempDir } from "./run-cli.js";

/** `tool-lessons memory TOOL` and `tool-lessons stats [TOOL]` on a SQLite ledger file. */

const TOOLS = [
  { name: "search_docs", description: "Search the product documentation for a topic. Returns pages." },
  { name: "get_weather", description: "Current weather for a city." },
];

function call(tool: string, i: number, text: string): NewRecord<CallRecord> {
  return {
    partition: "default",
    tool,
    runId: `run-${tool}-${i}`,
    request: `request ${i} about ${"a".repeat(i)}`,
    args: [{ name: "query", kind: "string", shape: "<text>" }],
    fingerprints: [],
    outcome: "success",
    latencyMs: 10 + i,
    tokens: 40,
    output: { text, chars: text.length, empty: false, truncated: false, zeroCount: false },
    source: "api",
  };
}

describe("tool-lessons memory / stats", () => {
  const { dir, cleanup } = tempDir();
  const path = join(dir, "ledger.db");

  beforeAll(async () => {
    const ledger = await openLedger({ path, failureSink: () => undefined });
    await registerTools(ledger, TOOLS);
    await ledger.appendCalls(
      Array.from({ length: 12 }, (_, i) =>
        call("search_docs", i, i % 3 === 0 ? "Found # pages." : "No results found."),
      ),
    );
    await ledger.appendCalls([call("get_weather", 1, "Sunny, ## degrees.")]);
    await ledger.close();
  });
  afterAll(cleanup);

  it("says there is nothing yet before a memory pass, then writes and shows the guideline with --refresh", async () => {
    const before = await runCli("memory", "search_docs", "--ledger", path);
    expect(before.code).toBe(0);
    expect(before.stdout).toMatch(/^search_docs: no evaluated calls yet; `--refresh` evaluates the recorded ones\./);
    expect(before.stdout).toContain("- calls: 0 evaluated, 0 recent");

    const after = await runCli("memory", "search_docs", "--refresh", "--ledger", path);
    expect(after.stderr).toBe("");
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(/^search_docs: guideline written .* UTC by deterministic\n/);
    expect(after.stdout).toContain("Guideline for search_docs (from its 12 most recent evaluated calls):");
    expect(after.stdout).toContain("- Succeeded but returned no results in 8 of 12 recent calls");
    expect(after.stdout).toContain("- success rate: 100% overall, 100% recent");
    expect(after.stdout).toContain("- average score (0 to 1): 0.67 overall, 0.67 recent");

    const asJson = await runCli("memory", "search_docs", "--json", "--ledger", path);
    const report = JSON.parse(asJson.stdout) as {
      guideline: { calls: number };
      stats: { totalCalls: number };
      text: string;
      stale: boolean;
    };
    expect(report).toMatchObject({
      tool: "search_docs",
      stale: false,
      guideline: { calls: 12 },
      stats: { totalCalls: 12 },
    });
    expect(report.text).toMatch(/^Guideline for search_docs/);
  });

  it("says not enough data when the recent window is below minEvaluatedCalls", async () => {
    const run = await runCli("memory", "get_weather", "--refresh", "--set", "minEvaluatedCalls=5", "--ledger", path);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^get_weather: not enough data for a guideline: 1 evaluated call\(s\) in the recent window; it needs 5\./,
    );
  });

  it("prints one row per tool, or one tool's statistics block, as text or JSON", async () => {
    const all = await runCli("stats", "--refresh", "--ledger", path);
    expect(all.code).toBe(0);
    const lines = all.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^tool +calls +recent +success +recent +score +recent +avg ms +avg tokens$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/))).toEqual([
      ["get_weather", "1", "1", "100%", "100%", "1.00", "1.00", "11", "40"],
      ["search_docs", "12", "12", "100%", "100%", "0.67", "0.67", "16", "40"],
    ]);
    const one = await runCli("stats", "search_docs", "--json", "--ledger", path);
    expect(JSON.parse(one.stdout)).toEqual({
      tool: "search_docs",
      totalCalls: 12,
      recentCalls: 12,
      successRate: 1,
      recentSuccessRate: 1,
      avgScore: 0.6667,
      recentAvgScore: 0.6667,
      avgLatencyMs: 15.5,
      avgTokens: 40,
    });
    const block = await runCli("stats", "search_docs", "--ledger", path);
    expect(block.stdout).toMatch(/^search_docs:\nStatistics:\n- calls: 12 evaluated, 12 recent\n/);
    const list = JSON.parse((await runCli("stats", "--json", "--ledger", path)).stdout) as { tool: string }[];
    expect(list.map((r) => r.tool)).toEqual(["get_weather", "search_docs"]);
  });

  it("fails with a reason for an unknown tool (1) and for bad arguments (2)", async () => {
    const unknown = await runCli("memory", "nope", "--ledger", path);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^tool-lessons memory: No tool "nope" in partition "default"/);
    expect((await runCli("stats", "nope", "--ledger", path)).code).toBe(1);
    const missing = await runCli("memory", "--ledger", path);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing a tool name");
    expect((await runCli("stats", "--set", "memoryRecent=0", "--ledger", path)).code).toBe(2);
    const help = await runCli("--help");
    expect(help.stdout).toMatch(/\n {2}memory +\S/);
    expect(help.stdout).toMatch(/\n {2}stats +\S/);
  });
});
