import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSettingAssignments, UsageError } from "../../src/cli/args.js";
import { runCli, tempDir, writeJsonl } from "./run-cli.js";
import { EVAL, TOOLS, TRAFFIC } from "./synthetic-data.js";

/** Every failure is one line on stderr, nothing on stdout. */
function oneLine(stderr: string): string {
  const lines = stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  return lines[0];
}

describe("tool-lessons argument errors", () => {
  const tmp = tempDir();
  let tools: string;
  let traffic: string;
  let evaluation: string;

  beforeAll(() => {
    tools = writeJsonl(tmp.dir, "tools.jsonl", TOOLS);
    traffic = writeJsonl(tmp.dir, "traffic.jsonl", TRAFFIC);
    evaluation = writeJsonl(tmp.dir, "eval.jsonl", EVAL);
  });
  afterAll(() => tmp.cleanup());

  it("a missing file exits 2 naming the option and the path", async () => {
    const missing = join(tmp.dir, "nope.jsonl");
    const run = await runCli("simulate", "--tools", missing, "--traffic", traffic, "--eval", evaluation);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(oneLine(run.stderr)).toBe(
      `tool-lessons simulate: cannot read the --tools file ${JSON.stringify(missing)}: no such file; check the path. See \`tool-lessons simulate --help\`.`,
    );
  });

  it("a line that is not JSON exits 2 with its file and line number", async () => {
    const bad = join(tmp.dir, "bad-json.jsonl");
    writeFileSync(bad, `${JSON.stringify(TRAFFIC[0])}\n\n${JSON.stringify(TRAFFIC[1])}\n{"query": "oops",\n`);
    const run = await runCli("simulate", "--tools", tools, "--traffic", bad, "--eval", evaluation);
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toMatch(new RegExp(`${bad.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:4: not valid JSON`));
  });

  it("a line of the wrong shape exits 2 with its line number and the field", async () => {
    const bad = writeJsonl(tmp.dir, "bad-shape.jsonl", [EVAL[0], EVAL[1], { query: "hi", expect: "get_weather" }]);
    const run = await runCli("simulate", "--tools", tools, "--traffic", traffic, "--eval", bad);
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toMatch(/bad-shape\.jsonl:3: "expect": .*expected array/);
  });

  it("a tool line without a name, or a repeated name, exits 2 with the line", async () => {
    const nameless = writeJsonl(tmp.dir, "nameless.jsonl", [TOOLS[0], { description: "no name" }]);
    let run = await runCli("simulate", "--tools", nameless, "--traffic", traffic, "--eval", evaluation);
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toMatch(/nameless\.jsonl:2: "name"/);
    const twice = writeJsonl(tmp.dir, "twice.jsonl", [TOOLS[0], TOOLS[1], TOOLS[0]]);
    run = await runCli("simulate", "--tools", twice, "--traffic", traffic, "--eval", evaluation);
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toMatch(/twice\.jsonl:3: tool "search_flights" is already defined on line 1/);
  });

  it("a bad number exits 2 naming the option and the value", async () => {
    for (const [option, value] of [
      ["--k", "five"],
      ["--cycles", "0"],
      ["--k", "-1"],
      ["--cycles", "2.5"],
    ]) {
      const run = await runCli(
        "simulate",
        "--tools",
        tools,
        "--traffic",
        traffic,
        "--eval",
        evaluation,
        `${option}=${value}`,
      );
      expect(run.code).toBe(2);
      expect(oneLine(run.stderr)).toContain(`${option} must be a positive integer; got ${JSON.stringify(value)}`);
    }
    const run = await runCli("simulate", "--tools", tools, "--traffic", traffic, "--eval", evaluation, "--k", "-1");
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toContain('--k needs a value (for one starting with "-", write --k=VALUE)');
  });

  it("fold options are checked: a list of integers, no overlap, a fold on every line", async () => {
    const queries = writeJsonl(tmp.dir, "queries.jsonl", [...TRAFFIC, ...EVAL]);
    let run = await runCli("simulate", "--tools", tools, "--queries", queries, "--eval-folds", "one");
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toContain("--eval-folds must be comma-separated fold numbers");
    run = await runCli(
      "simulate",
      "--tools",
      tools,
      "--queries",
      queries,
      "--traffic-folds",
      "1,2",
      "--eval-folds",
      "1",
    );
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toContain("fold 1 is in both --traffic-folds and --eval-folds");
    run = await runCli("simulate", "--tools", tools, "--queries", queries);
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toContain("--queries needs --eval-folds");
    const unfolded = writeJsonl(tmp.dir, "unfolded.jsonl", [EVAL[0], { query: "x", expect: [] }]);
    run = await runCli("simulate", "--tools", tools, "--queries", unfolded, "--eval-folds", "1");
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toMatch(/unfolded\.jsonl:2: no "fold" field/);
  });

  it("an unknown setting exits 2 and names the near miss, or else the known ones", async () => {
    let run = await runCli("review", "--ledger", join(tmp.dir, "x.db"), "--set", "minMises=3");
    expect(run.code).toBe(2);
    // A typo (one letter short) gets a "did you mean", as docs/cli.md promises.
    expect(oneLine(run.stderr)).toBe(
      'tool-lessons review: --set: unknown setting "minMises"; did you mean minMisses? See `tool-lessons review --help`.',
    );
    run = await runCli("review", "--ledger", join(tmp.dir, "x.db"), "--set", "frobnicate=3");
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toMatch(/unknown setting "frobnicate"; known settings: minCalls, .*minMisses/);
    run = await runCli("configure", "--ledger", join(tmp.dir, "x.db"), "min-misses=3");
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toContain('unknown setting "min-misses"; did you mean minMisses?');
    // The command names itself once ("configure: configure:" before).
    run = await runCli("configure", "--ledger", join(tmp.dir, "x.db"), "minMises=3");
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toBe(
      'tool-lessons configure: unknown setting "minMises"; did you mean minMisses? See `tool-lessons configure --help`.',
    );
  });

  it("a bad setting value exits 2 with what the schema expects", async () => {
    const run = await runCli("review", "--set", "minMisses=0");
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toMatch(/--set: bad setting value: minMisses: .*>=1/);
    expect(() => parseSettingAssignments(["maxQueries"], "--set")).toThrow(UsageError);
    expect(parseSettingAssignments(["retainTurns=20_000", "showLearnedExamples=true"], "--set")).toEqual({
      retainTurns: 20000,
      showLearnedExamples: true,
    });
  });

  it("unknown options, commands and missing arguments exit 2; --help exits 0", async () => {
    let run = await runCli("review", "--frobnicate");
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toBe(
      "tool-lessons review: unknown option --frobnicate. See `tool-lessons review --help`.",
    );
    run = await runCli("teach");
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toMatch(/unknown command "teach"/);
    run = await runCli("apply", "01ABC");
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toContain("missing --by NAME");
    run = await runCli("undo");
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toContain("missing a tool name");
    run = await runCli("simulate", "--tools", tools);
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toContain("missing --traffic FILE and --eval FILE");
    run = await runCli("cards", "--ledger", join(tmp.dir, "none.db"));
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toContain(`no ledger at ${join(tmp.dir, "none.db")}`);
    run = await runCli("cards", "--postgres", "mysql://localhost/db");
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toContain("--postgres must be a postgres:// or postgresql:// connection string");

    for (const command of [
      "eval",
      "lint",
      "report",
      "simulate",
      "review",
      "apply",
      "dismiss",
      "undo",
      "history",
      "flags",
      "configure",
      "cards",
      "partitions",
    ]) {
      run = await runCli(command, "--help");
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^Usage: tool-lessons ${command}`));
      expect(run.stdout).toContain("Example:");
    }
    run = await runCli();
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("Usage: tool-lessons <command>");
  });
});
