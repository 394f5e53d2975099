import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tempDir, writeJsonl } from "./run-cli.js";
import { EVAL, TOOLS, TRAFFIC } from "./synthetic-data.js";

const SCORE_KEYS = ["top1", "recall@5", "ndcg@5", "n"];

describe("tool-lessons simulate", () => {
  const tmp = tempDir();
  let tools: string;
  let traffic: string;
  let evaluation: string;
  let queries: string;

  beforeAll(() => {
    tools = writeJsonl(tmp.dir, "tools.jsonl", TOOLS);
    traffic = writeJsonl(tmp.dir, "traffic.jsonl", TRAFFIC);
    evaluation = writeJsonl(tmp.dir, "eval.jsonl", EVAL);
    queries = writeJsonl(tmp.dir, "queries.jsonl", [...TRAFFIC, ...EVAL]);
  });
  /** `simulate` over the synthetic tools, traffic and eval files, then `more`. */
  const simulateArgs = (...more: string[]): string[] => [
    "simulate",
    "--tools",
    tools,
    "--traffic",
    traffic,
    "--eval",
    evaluation,
    ...more,
  ];
  afterAll(() => tmp.cleanup());

  it("--json prints one JSON object with the documented keys, and learning helps", async () => {
    const run = await runCli(
      ...simulateArgs(),
      "--k",
      "2",
      "--cycles",
      "2",
      // Wordings off: "learning helps" here means the examples a review adds.
      "--wordings",
      "off",
      "--json",
    );
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(Object.keys(report)).toEqual(
      expect.arrayContaining(["before", "after", "lessons", "maxExamplesPerTool", "perTool", "k", "cycles", "seconds"]),
    );
    expect(Object.keys(report.before).sort()).toEqual([...SCORE_KEYS].sort());
    expect(Object.keys(report.after).sort()).toEqual([...SCORE_KEYS].sort());
    expect(Object.keys(report.lessons).sort()).toEqual(["examplesAdded", "notForAdded", "withdrawn"]);
    for (const side of [report.noTool.before, report.noTool.after])
      expect(Object.keys(side)).toEqual(expect.arrayContaining(["auroc", "precision", "recall"]));
    expect(report.requests[0]).toEqual(
      expect.objectContaining({ tool: expect.any(String), gained: expect.any(Number), lost: expect.any(Number) }),
    );
    expect(typeof report.maxNetLoss).toBe("number");
    expect(report.before.n).toBe(EVAL.length);
    expect(report.k).toBe(2);
    expect(report.cycles).toBe(2);
    expect(report.lessons.examplesAdded).toBeGreaterThan(0);
    expect(report.maxExamplesPerTool).toBeGreaterThan(0);
    expect(report.after["recall@5"]).toBeGreaterThanOrEqual(report.before["recall@5"]);
    expect(report.after.top1).toBeGreaterThan(report.before.top1);
    // Progress goes to stderr, never into the JSON on stdout.
    expect(run.stderr).toMatch(/cycle 1\/2/);
  });

  it("splits one --queries file by fold like separate --traffic and --eval files", async () => {
    const run = await runCli(
      "simulate",
      "--tools",
      tools,
      "--queries",
      queries,
      "--traffic-folds",
      "2",
      "--eval-folds",
      "1",
      "--k",
      "2",
      "--cycles",
      "2",
      "--json",
    );
    expect(run.code, run.stderr).toBe(0);
    const split = JSON.parse(run.stdout);
    const separate = JSON.parse((await runCli(...simulateArgs(), "--k", "2", "--cycles", "2", "--json")).stdout);
    expect(split.before).toEqual(separate.before);
    expect(split.after).toEqual(separate.after);
    expect(split.lessons).toEqual(separate.lessons);
    expect(run.stderr).toContain(`${TRAFFIC.length} traffic requests, ${EVAL.length} eval requests`);
  });

  it("prints a short table and the count of tools whose recall fell without --json", async () => {
    const run = await runCli("simulate", "--tools", tools, "--queries", queries, "--eval-folds", "1", "--k", "2");
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split("\n");
    expect(lines[0]).toMatch(/^\s+top1\s+recall@5\s+ndcg@5\s+n$/);
    expect(lines[1]).toMatch(/^before\s+\d+\.\d%/);
    expect(lines[2]).toMatch(/^after\s+\d+\.\d%/);
    expect(run.stdout).toMatch(/lessons: \d+ examples? added/);
    expect(run.stdout).toMatch(/tools \(>= 10 eval requests\) whose recall@5 fell by more than 5 points: \d+ of \d+/);
    expect(() => JSON.parse(run.stdout)).toThrow();
  });

  it("--shuffle replays in a seeded order (same seed, same result) and --set reaches the settings", async () => {
    const args = [...simulateArgs(), "--k", "2", "--cycles", "2", "--json"];
    const a = JSON.parse((await runCli(...args, "--shuffle", "3")).stdout);
    const b = JSON.parse((await runCli(...args, "--shuffle", "3")).stdout);
    expect(a.after).toEqual(b.after);
    expect(a.shuffleSeed).toBe(3);
    const capped = JSON.parse((await runCli(...args, "--set", "maxNewQueries=1", "--set", "maxQueries=1")).stdout);
    expect(capped.maxExamplesPerTool).toBeLessThanOrEqual(1);
  });

  it("refuses a bad --shuffle seed, a --center outside 0..1 or an unknown --set key with exit 2", async () => {
    const base = simulateArgs();
    const bad = await runCli(...base, "--shuffle", "x");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--shuffle takes a non-negative integer seed/);
    for (const center of ["1.5", "half", " "]) {
      const run = await runCli(...base, "--center", center);
      expect(run.code, center).toBe(2);
      expect(run.stderr).toMatch(/--center takes a share from 0 to 1/);
    }
    expect((await runCli(...base, "--center", "-1")).code).toBe(2);
    expect((await runCli(...base, "--set", "maxQueriez=3")).code).toBe(2);
    const wordings = await runCli(...base, "--wordings", "maybe");
    expect(wordings.code).toBe(2);
    expect(wordings.stderr).toMatch(/--wordings takes on or off/);
  });

  it("--embeddings names a preset; an unknown one exits 2 naming the choices", async () => {
    const base = [...simulateArgs(), "--k", "2", "--cycles", "1"];
    const bad = await runCli(...base, "--embeddings", "bert");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/lexical, use, word-vectors/);
    const lexical = JSON.parse((await runCli(...base, "--json")).stdout);
    const named = JSON.parse((await runCli(...base, "--embeddings", "lexical", "--json")).stdout);
    expect(named.after).toEqual(lexical.after);
  });

  it("--objective reaches the review: with every gain step off no example is chosen; a bad field or value exits 2", async () => {
    // Wordings off: the subject is how examples are chosen.
    const args = [...simulateArgs(), "--k", "2", "--wordings", "off", "--json"];
    const plain = JSON.parse((await runCli(...args)).stdout);
    const off = await runCli(...args, "--objective", "minGain=Infinity", "--objective", "fillGain=Infinity");
    expect(off.code, off.stderr).toBe(0);
    expect(plain.lessons.examplesAdded).toBeGreaterThan(0);
    expect(JSON.parse(off.stdout).lessons.examplesAdded).toBe(0);
    const typo = await runCli(...args, "--objective", "lossWieght=1");
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/--objective: unknown objective field "lossWieght"; did you mean lossWeight\?/);
    const negative = await runCli(...args, "--objective", "lossWeight=-1");
    expect(negative.code).toBe(2);
    expect(negative.stderr).toMatch(/--objective: bad objective field value: lossWeight: /);
    expect((await runCli(...args, "--objective", "nearDepth=0.5")).code).toBe(2);
    expect((await runCli(...args, "--objective", "softness")).code).toBe(2);
  });

  it("--center reaches the index: the same traffic routes differently with examples centered", async () => {
    const args = [
      ...simulateArgs(),
      "--k",
      "1",
      "--cycles",
      "2",
      // Wordings off: centering shapes the learned examples.
      "--wordings",
      "off",
      "--json",
    ];
    const runs = [await runCli(...args), await runCli(...args, "--center", "1")];
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const [plain, centered] = runs.map((run) => JSON.parse(run.stdout));
    // Before learning no tool has examples, so centering changes nothing; after, it does.
    expect(centered.before).toEqual(plain.before);
    expect(centered.after).not.toEqual(plain.after);
    expect(centered.lessons.examplesAdded).toBeGreaterThan(0);
  });
});
