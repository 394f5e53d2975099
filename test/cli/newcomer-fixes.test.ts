import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliProcess, tempDir, writeJsonl } from "./run-cli.js";
import { EVAL, TOOLS, TRAFFIC } from "./synthetic-data.js";

/**
 * What a newcomer's first try of the existing commands ran into (issue 18), each through a real
 * `tool-lessons` process: a review of a partition the ledger does not have, a mistyped setting,
 * simulate's message when one of two files is missing, recall@5 over five tools or fewer.
 */
describe("tool-lessons: the newcomer's stumbles", () => {
  const tmp = tempDir();
  let ledger: string;
  let tools: string;
  let traffic: string;
  let evaluation: string;

  beforeAll(async () => {
    ledger = join(tmp.dir, "ledger.db");
    tools = writeJsonl(tmp.dir, "tools.jsonl", TOOLS);
    traffic = writeJsonl(tmp.dir, "traffic.jsonl", TRAFFIC);
    evaluation = writeJsonl(tmp.dir, "eval.jsonl", EVAL);
    const stored = await runCliProcess(["configure", "--ledger", ledger, "--partition", "acme", "minMisses=3"]);
    expect(stored.code, stored.stderr).toBe(0);
  });
  afterAll(() => tmp.cleanup());

  it("review of a partition with no rows fails (exit 1) naming the partitions there are", async () => {
    const run = await runCliProcess(["review", "--ledger", ledger, "--partition", "u:nobody"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr.trim()).toMatch(
      /^tool-lessons review: partition "u:nobody" has no records, tools or settings in this ledger \(it has "acme"\)/,
    );
    expect(run.stderr).not.toContain("0 revisions");
  });

  it("review of a partition with settings but no calls says there is nothing to learn from", async () => {
    const run = await runCliProcess(["review", "--ledger", ledger, "--partition", "acme"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('partition "acme" has no recorded tool calls yet');
  });

  it("configure with a mistyped setting gets a did-you-mean, with the command named once", async () => {
    const run = await runCliProcess(["configure", "--ledger", ledger, "minMises=3"]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(
      'tool-lessons configure: unknown setting "minMises"; did you mean minMisses? See `tool-lessons configure --help`.',
    );
  });

  it("simulate names only the file that is missing", async () => {
    let run = await runCliProcess(["simulate", "--tools", tools, "--traffic", traffic]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("missing --eval FILE");
    expect(run.stderr).not.toContain("--traffic FILE");
    run = await runCliProcess(["simulate", "--tools", tools, "--eval", evaluation]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("missing --traffic FILE");
  });

  it("simulate over four tools says recall@5 means nothing there, in the table, on stderr and in --json", async () => {
    const four = writeJsonl(tmp.dir, "four.jsonl", TOOLS.slice(0, 4));
    const names = new Set(TOOLS.slice(0, 4).map((t) => t.name));
    const only = (rows: typeof TRAFFIC) => rows.filter((r) => r.expect.every((t) => names.has(t)));
    const t4 = writeJsonl(tmp.dir, "t4.jsonl", only(TRAFFIC));
    const e4 = writeJsonl(tmp.dir, "e4.jsonl", only(EVAL));
    let run = await runCliProcess([
      "simulate",
      "--tools",
      four,
      "--traffic",
      t4,
      "--eval",
      e4,
      "--k",
      "2",
      "--cycles",
      "1",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("note: with 4 tools, recall@5 is 100% whatever routing does: it means nothing here");
    expect(run.stderr).toContain("warning: with 4 tools, recall@5 is 100%");
    run = await runCliProcess([
      "simulate",
      "--tools",
      four,
      "--traffic",
      t4,
      "--eval",
      e4,
      "--k",
      "2",
      "--cycles",
      "1",
      "--json",
    ]);
    const out = JSON.parse(run.stdout);
    expect(out.after["recall@5"]).toBe(1);
    expect(out.warnings).toEqual([expect.stringContaining("recall@5 is 100% whatever routing does")]);
    // Over eight tools, k 2 is the warning: ranks 3-5 would not be offered.
    run = await runCliProcess([
      "simulate",
      "--tools",
      tools,
      "--traffic",
      traffic,
      "--eval",
      evaluation,
      "--k",
      "2",
      "--cycles",
      "1",
      "--json",
    ]);
    expect(JSON.parse(run.stdout).warnings).toEqual([expect.stringContaining("--k 2 is below 5")]);
    expect(existsSync(join(tmp.dir, ".tool-lessons"))).toBe(false);
  });
});
