import { describe, expect, it } from "vitest";
import { InvalidInput } from "../../src/errors.js";
import { simulate } from "../../src/evaluate/simulate.js";
import { EVAL, TOOLS, TRAFFIC } from "../cli/synthetic-data.js";

describe("simulate()", () => {
  it("routes with the index options given, as an application would build its index", async () => {
    const run = (index?: Parameters<typeof simulate>[0]["index"]) =>
      simulate({ tools: TOOLS, traffic: TRAFFIC, eval: EVAL, k: 2, cycles: 2, index });
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
});
