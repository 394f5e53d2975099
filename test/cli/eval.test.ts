import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { registerTools } from "../../src/learn/register.js";
import { openLedger } from "../../src/ledger/open.js";
import { CASES, CASES_WITH_FAILURE } from "./measure-data.js";
import { runCliProcess, tempDir, writeJsonl } from "./run-cli.js";
import { TOOLS } from "./synthetic-data.js";

const FIXTURES = join(import.meta.dirname, "fixtures");
const MODEL = join(FIXTURES, "scripted-model.mjs");

/** `main` in this process (no start-up cost): exit code and what it printed. */
async function inProcess(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io = { stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (stderr += t), env: {} };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

/** A case's expected tools as a list. */
const expected = (c: (typeof CASES)[number]): string[] =>
  c.expect === null ? [] : typeof c.expect === "string" ? [c.expect] : c.expect;

/** Every failure is one line on stderr naming the command, nothing on stdout. */
function failure(run: { stdout: string; stderr: string }): string {
  expect(run.stdout).toBe("");
  const lines = run.stderr
    .trimEnd()
    .split("\n")
    .filter((l) => !l.startsWith("eval: "));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^tool-lessons eval: /);
  return lines[0];
}

describe("tool-lessons eval (a real process)", () => {
  const tmp = tempDir();
  let tools: string;
  let cases: string;

  beforeAll(() => {
    tools = writeJsonl(tmp.dir, "tools.jsonl", TOOLS);
    cases = writeJsonl(tmp.dir, "cases.jsonl", CASES);
  });
  afterAll(() => tmp.cleanup());

  it("router mode: one JSON object with every outcome and what they add up to; no progress bar into a pipe", async () => {
    const run = await runCliProcess(["eval", "--tools", tools, "--cases", cases, "--min-score", "0.15", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(Object.keys(report)).toEqual(
      expect.arrayContaining([
        "mode",
        "label",
        "runs",
        "tools",
        "cases",
        "accuracy",
        "matrix",
        "perTool",
        "agreement",
        "diagnoses",
        "errors",
        "warnings",
      ]),
    );
    // The router repeats exactly: one run by default.
    expect(report).toMatchObject({ mode: "router", runs: 1, minScore: 0.15, k: [1, 3, 5] });
    expect(report.cases).toHaveLength(CASES.length);
    expect(report.matrix.labels.at(-1)).toBeNull();
    expect(report.accuracy.counted).toBe(CASES.length);
    expect(report.agreement.cases).toBe(0);
    expect(report.ranking.recallAtK.map((r: { k: number }) => r.k)).toEqual([1, 3, 5]);
    expect(report.ranking.cases).toBe(24);
    expect(report.noTool).toMatchObject({ threshold: 0.15 });
    expect(run.stderr).toContain(`eval: ${CASES.length} cases x 1 runs over ${TOOLS.length} tools (router)`);
    expect(run.stderr).not.toContain("\r");
  });

  it("prints accuracy, recall per tool, the largest confusions and the diagnoses for a person", async () => {
    const run = await runCliProcess(["eval", "--tools", tools, "--cases", cases, "--runs", "1"]);
    expect(run.code, run.stderr).toBe(0);
    const out = run.stdout;
    expect(out).toMatch(/^router \(lexical embeddings\) on tools\.jsonl: 27 cases x 1 runs over 8 tools/);
    expect(out).toMatch(/\naccuracy \d+\.\d% \(\d+ of 27 outcomes right; 0 errored, not counted\)/);
    expect(out).toContain("agreement: not measured (the router repeats exactly: one run per case)");
    expect(out).toMatch(
      /\nranking: recall@1 \d+\.\d%, recall@3 \d+\.\d%, recall@5 \d+\.\d% \(24 cases that need a tool/,
    );
    expect(out).toMatch(/\nno tool: AUROC \d\.\d{3} .*; no minScore, so nothing abstains\n/);
    expect(out).toMatch(/\nrecall per tool:\n\s+tool\s+cases\s+recall\s+precision\n/);
    expect(out).toContain("(no tool)");
    expect(out).toContain("largest confusions (expected -> picked, outcomes)");
    expect(out).toMatch(/\ndiagnoses:\n {2}null row: 9 of 9 outcomes|\ndiagnoses:\n[\s\S]*null row: 3 of 3 outcomes/);
    expect(out).toContain("note: router without minScore");
  });

  it("chat-model mode: the null row and column, repeats that disagree, a rate limit retried, a failing case reported not counted", async () => {
    const withFailure = writeJsonl(tmp.dir, "cases-f.jsonl", CASES_WITH_FAILURE);
    const run = await runCliProcess([
      "eval",
      "--tools",
      tools,
      "--cases",
      withFailure,
      "--model",
      MODEL,
      "--runs",
      "3",
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.mode).toBe("chat-model");
    expect(report.label).toBe("chat model ScriptedTravelModel on tools.jsonl");
    const at = (row: string | null, col: string | null): number =>
      report.matrix.counts[report.matrix.labels.indexOf(row)][report.matrix.labels.indexOf(col)];
    // Weather questions answered from its own knowledge: the null column.
    expect(at("get_weather", null)).toBe(9);
    // Chit-chat with a tool call once in three runs: the null row.
    expect(at(null, "set_reminder")).toBe(3);
    const disagreed: string[] = report.agreement.disagreements.map((d: { turn: string }) => d.turn);
    expect(disagreed).toEqual(expect.arrayContaining(["hi there", "hello, how are you", "thanks a lot"]));
    // Hotel turns flip to find_restaurant in one run of three.
    expect(disagreed.filter((t) => /sleep|lodging|bed and breakfast/.test(t))).toHaveLength(3);
    expect(report.agreement.share).toBeLessThan(1);
    // Airfare was rate-limited once and retried: no error. "explode" failed every run: reported.
    expect(report.errors).toEqual(
      [1, 2, 3].map((r) => ({
        id: "line 28",
        turn: "explode a hotel booking in oslo",
        run: r,
        error: "the model exploded",
      })),
    );
    expect(report.accuracy).toMatchObject({ counted: 27 * 3, errored: 3 });
    expect(report.diagnoses.map((d: { kind: string }) => d.kind)).toEqual(expect.arrayContaining(["null_column"]));
    expect(report.diagnoses.find((d: { kind: string }) => d.kind === "null_column").fix).toContain(
      "system-prompt problem",
    );
  });

  it("takes tools from a module exporting LangChain tools", async () => {
    const three = writeJsonl(
      tmp.dir,
      "cases-3.jsonl",
      CASES.filter(
        (c) => c.expect === null || ["search_flights", "book_hotel", "get_weather"].includes(String(c.expect)),
      ),
    );
    const run = await runCliProcess([
      "eval",
      "--tools",
      join(FIXTURES, "travel-tools.mjs"),
      "--cases",
      three,
      "--model",
      MODEL,
      "--runs",
      "1",
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.tools).toEqual(["search_flights", "book_hotel", "get_weather"]);
  });

  it("--lessons measures with what the ledger learned; --compare puts the two runs side by side", async () => {
    const before = join(tmp.dir, "before.json");
    const saved = await runCliProcess(["eval", "--tools", tools, "--cases", cases, "--runs", "1", "--json"]);
    writeFileSync(before, saved.stdout);
    const ledgerPath = join(tmp.dir, "ledger.db");
    const ledger = await openLedger({ path: ledgerPath });
    await registerTools(
      ledger,
      TOOLS.map((t) => ({ name: t.name, description: t.description })),
    );
    // get_weather's description lacks the users' words (rain, umbrella, sunny): it learned them.
    const card = (await ledger.getCard("default", "get_weather"))!;
    const examples = [
      "will it rain tomorrow in boston",
      "do I need an umbrella in denver",
      "is it sunny today in kyoto",
    ];
    await ledger.putCard({
      ...card,
      learned: {
        ...card.learned,
        examples: examples.map((text) => ({ text, source: "learned" as const, addedAt: 1 })),
      },
    });
    await ledger.close();
    const run = await runCliProcess([
      "eval",
      "--tools",
      tools,
      "--cases",
      cases,
      "--runs",
      "1",
      "--lessons",
      "--ledger",
      ledgerPath,
      "--compare",
      before,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^router \(lexical embeddings, lessons of 1 tools\) on tools\.jsonl/);
    expect(run.stdout).toMatch(
      /\nbefore: router \(lexical embeddings\) on tools\.jsonl \(27 cases x 1 runs\)\nafter: {2}router \(lexical embeddings, lessons of 1 tools\) on tools\.jsonl/,
    );
    expect(run.stdout).toMatch(/\naccuracy \d+\.\d% -> \d+\.\d% \(\+\d+\.\d points; repeats' noise 0\.0\): better/);
    // Learning rain and umbrella fixed three weather cases and pulled one other case to get_weather.
    expect(run.stdout).toContain("cases: 27 matched by turn, 3 fixed, 1 broken");
    const json = JSON.parse(
      (
        await runCliProcess([
          "eval",
          "--tools",
          tools,
          "--cases",
          cases,
          "--runs",
          "1",
          "--lessons",
          "--ledger",
          ledgerPath,
          "--compare",
          before,
          "--json",
        ])
      ).stdout,
    );
    expect(json.comparison.perTool.find((t: { tool: string }) => t.tool === "get_weather")).toMatchObject({
      before: 0,
      after: 1,
    });
  });

  it("--folds, --by, --k and cases with candidates: recall@k, the figures per value, each case among its own tools", async () => {
    const folded = writeJsonl(
      tmp.dir,
      "folded.jsonl",
      CASES.map((c, i) => ({
        ...c,
        fold: i % 3,
        category: expected(c).length === 0 ? "chat" : "task",
        // Every fourth tool case is routed among its expected tools and two that are not.
        ...(i % 4 === 0 && expected(c).length > 0
          ? {
              candidates: [
                ...expected(c),
                ...TOOLS.map((t) => t.name)
                  .filter((n) => !expected(c).includes(n))
                  .slice(0, 2),
              ],
            }
          : {}),
      })),
    );
    const inFolds = CASES.filter((_, i) => i % 3 !== 2).length;
    const withCandidates = CASES.filter((c, i) => i % 3 !== 2 && i % 4 === 0 && expected(c).length > 0).length;
    expect(withCandidates).toBeGreaterThan(0);
    const args = [
      "eval",
      "--tools",
      tools,
      "--cases",
      folded,
      "--folds",
      "0,1",
      "--by",
      "category",
      "--min-score",
      "0.15",
    ];
    let run = await runCliProcess([...args, "--k", "1,2", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.cases).toHaveLength(inFolds);
    expect(report.k).toEqual([1, 2]);
    expect(report.amongCandidates).toBe(withCandidates);
    for (const c of report.cases.filter((x: { candidates?: string[] }) => x.candidates))
      expect(c.ranked.every((t: string) => c.candidates.includes(t))).toBe(true);
    expect(report.breakdowns[0].field).toBe("category");
    expect(report.breakdowns[0].values.map((v: { value: string }) => v.value).sort()).toEqual(["chat", "task"]);
    const chat = report.breakdowns[0].values.find((v: { value: string }) => v.value === "chat");
    expect(chat.noTool).toMatchObject({ threshold: 0.15 });
    expect(run.stderr).toContain(`; ${withCandidates} cases routed among their own candidates`);

    run = await inProcess(args);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /\nranking: recall@1 [\d.]+%, recall@3 [\d.]+%, recall@5 [\d.]+% \(\d+ cases that need a tool/,
    );
    expect(run.stdout).toMatch(
      /\nno tool: AUROC \d\.\d{3} .*; below minScore 0\.15: precision [\d.]+%, recall [\d.]+%\n/,
    );
    expect(run.stdout).toContain(`candidates: ${withCandidates} of ${inFolds} cases routed among their own candidates`);
    expect(run.stdout).toMatch(
      /\nby category:\n {2}category +cases +no tool +accuracy +recall@1 +recall@3 +recall@5 +AUROC +abst\. prec\. +abst\. recall\n/,
    );
    expect(run.stdout).toMatch(/\n {2}chat +[12] +[12] +/);

    // --ignore-candidates routes them among all the tools.
    run = await inProcess([...args, "--ignore-candidates", "--json"]);
    expect(JSON.parse(run.stdout).amongCandidates).toBeUndefined();

    // Cases that say their kind are broken down by it without --by.
    const kinds = writeJsonl(tmp.dir, "kinds.jsonl", [
      ...CASES.slice(0, 6),
      { turn: "hi there", expect: null, kind: "chit-chat" },
      { turn: "what is the capital of peru", expect: null, kind: "off-topic" },
    ]);
    run = await inProcess(["eval", "--tools", tools, "--cases", kinds, "--min-score", "0.15", "--json"]);
    const byKind = JSON.parse(run.stdout).breakdowns;
    expect(byKind.map((b: { field: string }) => b.field)).toEqual(["kind"]);
    expect(byKind[0].values.map((v: { value: string }) => v.value).sort()).toEqual([
      "(none)",
      "chit-chat",
      "off-topic",
    ]);
    expect(byKind[0].values.find((v: { value: string }) => v.value === "off-topic").noTool.auroc).toEqual(
      expect.any(Number),
    );

    // A field no case has is said; folds need a fold on every case; a bad --k is refused.
    run = await inProcess([...args, "--by", "colour"]);
    expect(run.stderr).toContain('eval: warning: no case has a "colour" field');
    run = await inProcess(["eval", "--tools", tools, "--cases", cases, "--folds", "1"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/cases\.jsonl:1: no "fold" field; filtering by folds needs one on every case\.\n$/);
    run = await inProcess(["eval", "--tools", tools, "--cases", folded, "--folds", "7"]);
    expect(run.stderr).toMatch(
      /^tool-lessons eval: no case of .*folded\.jsonl is in folds 7; its folds are 0, 1, 2\.\n$/,
    );
    run = await inProcess(["eval", "--tools", tools, "--cases", cases, "--k", "1,0"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^tool-lessons eval: --k takes comma-separated positive integers/);
  });

  it("two tools with one description and schema: reported as duplicates to merge or rename, not a dense pair", async () => {
    const copy = { ...TOOLS[0], name: "flight_search", description: `${TOOLS[0].description.toUpperCase()}  ` };
    const twins = writeJsonl(tmp.dir, "twins.jsonl", [...TOOLS, copy]);
    const run = await runCliProcess(["eval", "--tools", twins, "--cases", cases, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.duplicates).toEqual([["flight_search", "search_flights"]]);
    const kinds = report.diagnoses.map((d: { kind: string; tools: string[] }) => `${d.kind} ${d.tools.join(",")}`);
    expect(kinds).toContain("duplicate_tools flight_search,search_flights");
    expect(kinds.filter((k: string) => k.startsWith("dense_pair") && k.includes("flight_search"))).toEqual([]);
    const text = await inProcess(["eval", "--tools", twins, "--cases", cases]);
    expect(text.stdout).toMatch(
      /\n {2}duplicate tools: flight_search and search_flights have the same description and argument schema/,
    );
  });

  it("bad input: a clear line, exit 2, for a missing file, a malformed line, an unknown tool, bad numbers", async () => {
    let run = await runCliProcess(["eval", "--tools", tools, "--cases", join(tmp.dir, "nope.jsonl")]);
    expect(run.code).toBe(2);
    expect(failure(run)).toBe(
      `tool-lessons eval: cannot read the cases file ${JSON.stringify(join(tmp.dir, "nope.jsonl"))}: no such file; check the path.`,
    );
    const broken = join(tmp.dir, "broken.jsonl");
    writeFileSync(broken, `${JSON.stringify(CASES[0])}\n${JSON.stringify(CASES[1])}\n{"turn": "x", "expect": \n`);
    run = await runCliProcess(["eval", "--tools", tools, "--cases", broken]);
    expect(run.code).toBe(2);
    expect(failure(run)).toMatch(/broken\.jsonl:3: not valid JSON/);
    const unknown = writeJsonl(tmp.dir, "unknown.jsonl", [
      CASES[0],
      { turn: "book a table", expect: "find_restaurants" },
    ]);
    run = await runCliProcess(["eval", "--tools", tools, "--cases", unknown]);
    expect(run.code).toBe(2);
    expect(failure(run)).toContain(
      `unknown.jsonl:2: expects tool "find_restaurants", which is not among the 8 tools given. Did you mean "find_restaurant"?`,
    );
    // The rest in this process: the same main, without a process start each (the machine may be loaded).
    run = await inProcess(["eval", "--tools", tools, "--cases", cases, "--runs", "0"]);
    expect(failure(run)).toContain("--runs must be a positive integer");
    run = await inProcess(["eval", "--tools", tools, "--cases", cases, "--model", MODEL, "--min-score", "0.2"]);
    expect(failure(run)).toContain("--min-score is for the router alone");
    run = await inProcess(["eval", "--tools", join(FIXTURES, "scripted-model.mjs"), "--cases", cases]);
    expect(run.code).toBe(2);
    expect(failure(run)).toContain("exports no LangChain tools");
    run = await inProcess(["eval", "--tools", tools]);
    expect(failure(run)).toContain("missing --cases FILE");
  });

  it("a bad store: exit 2 for a URL that is not Postgres, 1 for a server that is down", async () => {
    let run = await runCliProcess([
      "eval",
      "--tools",
      tools,
      "--cases",
      cases,
      "--lessons",
      "--postgres",
      "mysql://localhost/db",
    ]);
    expect(run.code).toBe(2);
    expect(failure(run)).toContain("--postgres must be a postgres:// or postgresql:// connection string");
    run = await runCliProcess([
      "eval",
      "--tools",
      tools,
      "--cases",
      cases,
      "--lessons",
      "--postgres",
      "postgres://tl:secret@127.0.0.1:1/none",
    ]);
    // Without the ledger's secret, Postgres is refused before any connection (issue 44, item 4).
    expect(run.code).toBe(2);
    expect(failure(run)).toMatch(/TOOL_LESSONS_KEY/);
    run = await runCliProcess(
      ["eval", "--tools", tools, "--cases", cases, "--lessons", "--postgres", "postgres://tl:secret@127.0.0.1:1/none"],
      { env: { TOOL_LESSONS_KEY: "the-secret-of-this-test" } },
    );
    expect(run.code).toBe(1);
    expect(failure(run)).toMatch(/Cannot open the Postgres ledger at postgres:\/\/tl:\*\*\*@127\.0\.0\.1:1\/none/);
    run = await runCliProcess([
      "eval",
      "--tools",
      tools,
      "--cases",
      cases,
      "--lessons",
      "--ledger",
      join(tmp.dir, "missing.db"),
    ]);
    expect(run.code).toBe(2);
    expect(failure(run)).toContain("no ledger at");
  });

  it("exits 1 when every case run failed", async () => {
    const doomed = writeJsonl(tmp.dir, "doomed.jsonl", [{ turn: "explode now", expect: "book_hotel" }]);
    const run = await runCliProcess(["eval", "--tools", tools, "--cases", doomed, "--model", MODEL, "--runs", "2"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("tool-lessons eval: every case run failed; the first: the model exploded.");
  });

  it("draws a progress bar on stderr only when it is a terminal", async () => {
    let stderr = "";
    let stdout = "";
    const io = {
      stdout: (t: string) => void (stdout += t),
      stderr: (t: string) => void (stderr += t),
      env: {},
      stderrIsTTY: true,
    };
    expect(await main(["eval", "--tools", tools, "--cases", cases, "--runs", "2", "--json"], io)).toBe(0);
    expect(stderr).toMatch(/\r\x1b\[Keval \[#+\] 54\/54 100%/);
    expect(stdout).not.toContain("\r");
    expect(JSON.parse(stdout).runs).toBe(2);
  });
});
