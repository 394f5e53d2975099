import { describe, expect, it } from "vitest";
import { gateText } from "../../src/text/gate.js";
import {
  collectValues,
  containsFingerprint,
  createMasker,
  MASK_BUDGET,
  maskText,
  valueFingerprints,
  withinBudget,
} from "../../src/text/mask.js";

const KEY = "k".repeat(64);

describe("masking cost bounded by MASK_BUDGET", () => {
  it("walks at most maxWalkNodes of a huge argument and says the rest was not read", () => {
    const huge = { values: Array.from({ length: 1_000_000 }, (_, i) => i * 7.31) };
    const collected = collectValues(huge);
    expect(collected.oversize).toBe(true);
    expect(collected.leaves.length + collected.bulk.length).toBeLessThanOrEqual(MASK_BUDGET.maxWalkNodes);
  });

  it("keeps at most maxFingerprints per call (a sample, whole values first)", () => {
    const huge = { names: Array.from({ length: 200_000 }, (_, i) => `Customer ${i} Whitfield-${i}`) };
    const fingerprints = valueFingerprints(huge, KEY);
    expect(fingerprints.length).toBeLessThanOrEqual(MASK_BUDGET.maxFingerprints);
    expect(containsFingerprint("Customer 0 Whitfield-0", fingerprints, KEY)).toBe(true);
  });

  it("a run with values past the budget masks every uncommon word of its texts (strict)", () => {
    const huge = { values: [...Array.from({ length: 50_000 }, (_, i) => i), "Zyxqvort Castellanos"] };
    const masked = maskText("refund the order for Zyxqvort Castellanos today", [huge]);
    expect(masked).not.toMatch(/Zyxqvort|Castellanos/);
    expect(masked).toMatch(/refund the order for/);
  });

  it("one huge call does not leave another call's values unread", () => {
    const huge = { values: Array.from({ length: 100_000 }, () => 0) };
    const small = { to: "Rose Baker" };
    expect(maskText("Example: refund the order for Rose Baker", [huge, small])).toBe(
      "Example: refund the order for <value>",
    );
  });

  it("masks at most maxTextChars of a text, cut at a space, and the gate checks that part only", () => {
    const text = "word ".repeat(400_000);
    const cut = withinBudget(text);
    expect(cut.length).toBeLessThanOrEqual(MASK_BUDGET.maxTextChars + 2);
    expect(cut.endsWith(" …")).toBe(true);
    expect(createMasker([{ a: "Margaret" }])(text).text.length).toBeLessThanOrEqual(MASK_BUDGET.maxTextChars + 2);
    expect(gateText(text, { kind: "stored" }).text.length).toBeLessThanOrEqual(MASK_BUDGET.maxTextChars + 2);
    expect(withinBudget("short text")).toBe("short text");
  });

  it("recording-size work stays bounded: a 1,000,000-number argument is masked and fingerprinted quickly", () => {
    const huge = { values: Array.from({ length: 1_000_000 }, (_, i) => i * 7.31) };
    const t0 = performance.now();
    valueFingerprints(huge, KEY);
    createMasker([huge])("lookup failed for 7.31");
    // Generous (the machine may be loaded): before the budget this took 49 s.
    expect(performance.now() - t0).toBeLessThan(5_000);
  });
});
