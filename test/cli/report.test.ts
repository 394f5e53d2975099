import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CASES } from "./measure-data.js";
import { seedReportLedger } from "./report-ledger.js";
import { runCliProcess, tempDir, writeJsonl } from "./run-cli.js";
import { TOOLS } from "./synthetic-data.js";

describe("tool-lessons report (a real process)", () => {
  const tmp = tempDir();
  let tools: string;
  let cases: string;
  let ledger: string;

  beforeAll(async () => {
    tools = writeJsonl(tmp.dir, "tools.jsonl", TOOLS);
    cases = writeJsonl(tmp.dir, "cases.jsonl", CASES);
    ledger = join(tmp.dir, "ledger.db");
    await seedReportLedger(ledger);
  });
  afterAll(() => tmp.cleanup());

  it("writes one page: now with the ledger's lessons, before as written, revisions, rules, flags, the linter", async () => {
    const out = join(tmp.dir, "report.html");
    const run = await runCliProcess([
      "report",
      "--tools",
      tools,
      "--cases",
      cases,
      "--out",
      out,
      "--ledger",
      ledger,
      "--min-score",
      "0.15",
      "--runs",
      "2",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^wrote ${out.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(\\d+ KB\\)\n`));
    expect(run.stdout).toMatch(/accuracy \d+\.\d% \(before \d+\.\d%: better\)/);
    expect(run.stdout).toContain('ledger "default": 1 pending revisions, 1 rules, 1 usage flags, 0 flagged lessons');
    // get_weather's learned words, and convert_currency's applied revision.
    expect(run.stderr).toContain("with the lessons of 2 tools");
    const html = readFileSync(out, "utf8");
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain("accuracy before (router (lexical embeddings, minScore 0.15) on tools.jsonl)");
    expect(html).toContain("lessons of 2 tools");
    expect(html).toMatch(
      /<tr data-revision="[^"]+" data-verdict="not_enough_data"><td>convert_currency<\/td><td><code>[^<]+<\/code><\/td><td>not enough data<\/td>/,
    );
    expect(html).toMatch(/<div class="revision" data-revision="[^"]+"><strong>search_flights<\/strong>/);
    expect(html).toContain("validation ×2: “date must be an ISO date” (args: date)");
    expect(html).toContain("Never send email on weekends.");
    expect(html).toContain("retrieved never called");
    expect(html).toContain('id="lint-findings"');
    expect(existsSync(`${out}.${process.pid}.tmp`)).toBe(false);
  });

  it("--json prints the page's data: the heatmap's labels and the whole matrix", async () => {
    const out = join(tmp.dir, "data.html");
    const run = await runCliProcess([
      "report",
      "--tools",
      tools,
      "--cases",
      cases,
      "--out",
      out,
      "--ledger",
      ledger,
      "--runs",
      "1",
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    const data = JSON.parse(run.stdout);
    expect(Object.keys(data)).toEqual([
      "title",
      "generatedAt",
      "run",
      "before",
      "comparison",
      "lint",
      "ledger",
      "heatmap",
    ]);
    expect(data.run.cases).toBe(CASES.length);
    expect(data.heatmap.labels).toHaveLength(data.run.matrix.labels.length);
    const embedded = /<script type="application\/json" id="tool-lessons-report">([\s\S]*?)<\/script>/.exec(
      readFileSync(out, "utf8"),
    )![1];
    expect(JSON.parse(embedded)).toEqual(data);
  });

  it("without a ledger (none named, none at the default path) the page says so", async () => {
    const out = join(tmp.dir, "no-ledger.html");
    const run = await runCliProcess(["report", "--tools", tools, "--cases", cases, "--out", out, "--runs", "1"], {
      cwd: tmp.dir,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("ledger: none");
    expect(readFileSync(out, "utf8")).toContain("No ledger at .tool-lessons/ledger.db and none named");
  });

  it("bad input or a bad store: a clear line, a non-zero exit, nothing written", async () => {
    const out = join(tmp.dir, "never.html");
    const broken = join(tmp.dir, "broken.jsonl");
    writeFileSync(broken, `${JSON.stringify(CASES[0])}\n{"turn": 5, "expect": null}\n`);
    const unknown = writeJsonl(tmp.dir, "unknown.jsonl", [{ turn: "x", expect: "teleport" }]);
    const attempts = [
      [["--cases", join(tmp.dir, "nope.jsonl")], 2, /cannot read the cases file .*nope\.jsonl": no such file/],
      [["--cases", broken], 2, /broken\.jsonl:2: "turn": /],
      [["--cases", unknown], 2, /unknown\.jsonl:1: expects tool "teleport", which is not among the 8 tools given/],
      [
        ["--cases", cases, "--postgres", "postgresql://tl:secret@127.0.0.1:1/none"],
        1,
        /Cannot open the Postgres ledger at postgresql:\/\/tl:\*\*\*@127\.0\.0\.1:1\/none/,
      ],
      [["--cases", cases, "--postgres", "sqlite://x"], 2, /--postgres must be a postgres:\/\//],
      [["--cases", cases, "--ledger", join(tmp.dir, "missing.db")], 2, /no ledger at /],
      [["--cases", cases, "--before", broken], 2, /--before .*broken\.jsonl" is not JSON/],
    ] as const;
    for (const [argv, code, message] of attempts) {
      // The ledger's secret is given, so a Postgres that is down is what fails (issue 44, item 4).
      const run = await runCliProcess(["report", "--tools", tools, "--out", out, ...argv], {
        env: { TOOL_LESSONS_KEY: "the-secret-of-this-test" },
      });
      expect(run.code, `${argv.join(" ")}: ${run.stderr}`).toBe(code);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(message);
      expect(
        run.stderr
          .trimEnd()
          .split("\n")
          .filter((l) => l.startsWith("tool-lessons report:")),
      ).toHaveLength(1);
      expect(existsSync(out)).toBe(false);
    }
    const run = await runCliProcess([
      "report",
      "--tools",
      tools,
      "--cases",
      cases,
      "--out",
      join(tmp.dir, "no-such-dir", "r.html"),
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("no folder");
    const missingOut = await runCliProcess(["report", "--tools", tools, "--cases", cases]);
    expect(missingOut.stderr).toContain("missing --out FILE.html");
  });

  it("compares with a saved run given as --before", async () => {
    const before = join(tmp.dir, "before.json");
    writeFileSync(
      before,
      (await runCliProcess(["eval", "--tools", tools, "--cases", cases, "--runs", "1", "--json"])).stdout,
    );
    const out = join(tmp.dir, "vs-saved.html");
    const run = await runCliProcess(
      ["report", "--tools", tools, "--cases", cases, "--out", out, "--before", before, "--runs", "1"],
      { cwd: tmp.dir },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/accuracy \d+\.\d% \(before \d+\.\d%: within noise\)/);
  });
});
