import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BAD_TOOLS, GOOD_TOOLS } from "../evaluate/lint-fixtures.js";
import { runCliProcess, tempDir, writeJsonl } from "./run-cli.js";

const FIXTURES = join(import.meta.dirname, "fixtures");
/** The fixtures as JSONL tool lines (`schema` is `parameters` in the file format). */
const lines = (tools: typeof GOOD_TOOLS) =>
  tools.map((t) => ({ name: t.name, description: t.description, parameters: t.schema ?? null }));

describe("tool-lessons lint (a real process)", () => {
  const tmp = tempDir();
  let good: string;
  let bad: string;

  beforeAll(() => {
    good = writeJsonl(tmp.dir, "good.jsonl", lines(GOOD_TOOLS));
    bad = writeJsonl(tmp.dir, "bad.jsonl", lines(BAD_TOOLS));
  });
  afterAll(() => tmp.cleanup());

  it("one line per finding with the tool, the rule and the fix; exit 1 for CI", async () => {
    const run = await runCliProcess(["lint", "--tools", bad]);
    expect(run.code).toBe(1);
    const found = run.stdout.trimEnd().split("\n");
    expect(found.length).toBeGreaterThanOrEqual(10);
    for (const line of found)
      expect(line).toMatch(
        /^[a-z_]+: (boundary|constraints-in-prose|vague-parameter|no-return|side-effect-late|mode-switch): [a-z]+[^:]*: .+ Fix: .+/,
      );
    expect(found).toContain(
      `update_subscription: side-effect-late: description: it charges, but the first clause ("Update a customer's subscription.") does not say so: charges (from parameter prorate). Fix: open with the side effect (e.g. "IRREVERSIBLE: Charges …"), then what it is for; say what cannot be undone.`,
    );
    expect(run.stderr.trim()).toBe(
      "lint: 14 findings on 8 of 9 tools (tools failing each rule: boundary 2, constraints-in-prose 1, vague-parameter 2, no-return 2, side-effect-late 2, mode-switch 1)",
    );
  });

  it("exit 0 when every rule holds; --json; --rule narrows", async () => {
    let run = await runCliProcess(["lint", "--tools", good]);
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr.trim()).toBe("lint: 5 tools, every rule holds");
    run = await runCliProcess(["lint", "--tools", bad, "--json"]);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(Object.keys(report)).toEqual(["tools", "failing", "counts", "findings", "neighbours", "modelNotes"]);
    expect(report.counts["mode-switch"]).toBe(1);
    run = await runCliProcess(["lint", "--tools", bad, "--rule", "mode-switch", "--rule", "vague-parameter"]);
    expect(
      run.stdout
        .trimEnd()
        .split("\n")
        .map((l) => l.split(": ").slice(0, 2).join(": ")),
    ).toEqual([
      "lookup_record: vague-parameter",
      "lookup_record: vague-parameter",
      "email_customer: vague-parameter",
      "manage_ticket: mode-switch",
    ]);
  });

  it("lints the tools a module exports", async () => {
    const run = await runCliProcess(["lint", "--tools", join(FIXTURES, "travel-tools.mjs"), "--json"]);
    const report = JSON.parse(run.stdout);
    expect(report.tools).toBe(3);
    expect(report.findings.map((f: { tool: string; rule: string }) => `${f.tool} ${f.rule}`)).toContain(
      "get_weather no-return",
    );
  });

  it("bad input: exit 2, one line, nothing on stdout", async () => {
    const cases = [
      [["lint", "--tools", join(tmp.dir, "none.jsonl")], /cannot read the --tools file .*none\.jsonl": no such file/],
      [["lint", "--tools", bad, "--rule", "tone"], /unknown rule "tone"; the rules are boundary, /],
      [["lint", "--tools", bad, "--min-similarity", "2"], /--min-similarity takes a number from 0 to 1; got "2"/],
      [["lint"], /missing --tools FILE/],
      [
        ["lint", "--tools", bad, "--model", join(tmp.dir, "model.txt")],
        /--model takes a module that exports a LangChain chat model/,
      ],
    ] as const;
    for (const [argv, message] of cases) {
      const run = await runCliProcess([...argv]);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(run.stderr).toMatch(message);
    }
    const broken = join(tmp.dir, "broken.jsonl");
    writeFileSync(broken, `${JSON.stringify(lines(GOOD_TOOLS)[0])}\n{"name": 3}\n`);
    const run = await runCliProcess(["lint", "--tools", broken]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/broken\.jsonl:2: "name": /);
  });
});
