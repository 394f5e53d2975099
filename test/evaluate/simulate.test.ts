import { describe, expect, it } from "vitest";
import { InvalidInput } from "../../src/errors.js";
import { simulate } from "../../src/evaluate/simulate.js";
import { EVAL, TOOLS, TRAFFIC } from "../cli/synthetic-data.js";

describe("simulate()", () => {
  it("routes with the index options given, as an application would build its index", async () => {
    // Wordings off: the options under test shape the learned examples (wordings would cover the misses).
    const run = (index?: Parameters<typeof simulate>[0]["index"]) =>
      simulate({ tools: TOOLS, traffic: TRAFFIC, eval: EVAL, k: 2, cycles: 2, index: { wordings: false, ...index } });
    const [plain, centered] = [await run(), await run({ examples: { center: 1 } })];
    for (const report of [plain, centered]) {
      expect(report.lessons.examplesAdded).toBeGreaterThan(0);
      expect(report.after.top1).toBeGreaterThan(report.before.top1);
    }
    // Another index layout routes the same requests differently from the first routing on.
    const perExample = await run({ mode: "examples", lexical: { dimension: 256 } });
    expect(perExample.before).not.toEqual(plain.before);
    // The index checks its options: a bad one fails before anything is replayed.
    await expect(run({ examples: { center: 2 } })).rejects.toThrow(InvalidInput);
  });

  it("with wordings on (the default), routing learns the traffic's words without an example; off learns examples", async () => {
    const on = await simulate({
      tools: TOOLS,
      traffic: TRAFFIC,
      eval: EVAL,
      k: 2,
      cycles: 2,
    });
    const off = await simulate({
      tools: TOOLS,
      traffic: TRAFFIC,
      eval: EVAL,
      k: 2,
      cycles: 2,
      index: { wordings: false },
    });
    expect(on.before).toEqual(off.before);
    expect(on.after.top1).toBeGreaterThan(on.before.top1);
    expect(on.lessons.examplesAdded).toBeLessThan(off.lessons.examplesAdded);
    expect(on.maxNetLoss).toBeLessThanOrEqual(off.maxNetLoss);
  });
});

describe("simulate() no-tool and per-tool counts", () => {
  const CHATTER = ["hello there friend", "thanks that is all", "good night", "ok cool", "haha nice one"];
  const noTool = (n: number, offset: number) =>
    Array.from({ length: n }, (_, i) => ({ query: `${CHATTER[i % CHATTER.length]} ${i + offset}`, expect: [] }));

  it("reports no-tool AUROC before and after, the calibrated threshold's precision and recall, and requests gained and lost", async () => {
    const report = await simulate({
      tools: TOOLS,
      traffic: [...TRAFFIC, ...noTool(12, 0)],
      eval: [...EVAL, ...noTool(6, 100)],
      k: 2,
      cycles: 2,
      abstain: { minServed: 10, minNoTool: 5 },
    });
    // Before learning, the descriptions lack the users' words: their requests score like chatter.
    expect(report.noTool.after.auroc).toBeGreaterThan(Math.max(0.5, report.noTool.before.auroc));
    expect(report.noTool.after.threshold).toBeDefined();
    expect(report.noTool.after.recall).toBeGreaterThan(0);
    expect(report.noTool.after.precision).toBeGreaterThan(0);
    const gained = report.requests.reduce((n, r) => n + r.gained, 0);
    const lost = report.requests.reduce((n, r) => n + r.lost, 0);
    expect(gained).toBeGreaterThan(lost);
    expect(report.requests.reduce((n, r) => n + r.n, 0)).toBe(EVAL.length);
    expect(report.maxNetLoss).toBe(Math.max(0, ...report.requests.map((r) => r.lost - r.gained)));
    // Without no-tool traffic there is nothing to calibrate on: no threshold, no abstention.
    const bare = await simulate({
      tools: TOOLS,
      traffic: TRAFFIC,
      eval: [...EVAL, ...noTool(6, 100)],
      k: 2,
      cycles: 2,
    });
    expect(bare.noTool.after).toMatchObject({ precision: 0, recall: 0 });
    expect(bare.noTool.after.threshold).toBeUndefined();
  });
});

describe("simulate() with the fitted 'no tool' model", () => {
  const CHATTER = ["hello there friend", "thanks that is all", "good night", "ok cool", "haha nice one"];
  const chatter = (n: number, offset: number, kind?: string) =>
    Array.from({ length: n }, (_, i) => ({
      query: `${CHATTER[i % CHATTER.length]} ${i + offset}`,
      expect: [],
      ...(kind ? { kind } : {}),
    }));

  it("reports the model's AUROC, precision and recall before and after, and both decisions per kind", async () => {
    const report = await simulate({
      tools: TOOLS,
      traffic: [...TRAFFIC, ...chatter(12, 0)],
      eval: [...EVAL.map((e) => ({ ...e, kind: "task" })), ...chatter(6, 100, "chit_chat")],
      k: 2,
      cycles: 2,
      abstain: { minServed: 10, minNoTool: 5 },
    });
    for (const side of [report.abstainModel.before, report.abstainModel.after]) {
      expect(side).toBeDefined();
      expect(side!.auroc).toBeGreaterThanOrEqual(0);
      expect(side!.auroc).toBeLessThanOrEqual(1);
    }
    // Chatter is short and shares no word with any tool: the model separates it.
    expect(report.abstainModel.after!.auroc).toBeGreaterThan(0.9);
    expect(report.noToolByKind?.map((k) => k.kind)).toEqual(["chit_chat", "task"]);
    const chit = report.noToolByKind!.find((k) => k.kind === "chit_chat")!;
    expect(chit.n).toBe(6);
    expect(chit.model?.auroc).toBe(report.abstainModel.after!.auroc);
    // A kind with no no-tool request has nothing to separate.
    expect(report.noToolByKind!.find((k) => k.kind === "task")!.score).toBeUndefined();
  });

  it("fits no model, and says so, when the traffic has too few no-tool requests", async () => {
    const report = await simulate({ tools: TOOLS, traffic: TRAFFIC, eval: EVAL, k: 2, cycles: 1 });
    expect(report.abstainModel).toEqual({});
    expect(report.noToolByKind).toBeUndefined();
  });
});
