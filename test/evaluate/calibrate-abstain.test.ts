import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import {
  abstainLabel,
  abstainThreshold,
  type AbstainSample,
  calibrateAbstain,
  DEFAULT_ABSTAIN_OPTIONS,
} from "../../src/evaluate/calibrate-abstain.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";

const served = (scores: number[]): AbstainSample[] => scores.map((score) => ({ score, served: true }));
const none = (scores: number[]): AbstainSample[] => scores.map((score) => ({ score, served: false }));
const range = (n: number, from: number, step: number): number[] => Array.from({ length: n }, (_, i) => from + i * step);

describe("abstainThreshold", () => {
  it("separates no-tool requests that score low from served ones", () => {
    const t = abstainThreshold([...served(range(100, 0.5, 0.004)), ...none(range(20, 0.1, 0.01))]);
    expect(t).toBeDefined();
    expect(t!).toBeGreaterThan(0.29);
    expect(t!).toBeLessThan(0.5);
  });

  it("never turns away more than maxServedLoss of the served requests", () => {
    // Every no-tool request scores like the best served ones: nothing can be turned away cheaply.
    const samples = [...served(range(100, 0.2, 0.005)), ...none(range(20, 0.6, 0.001))];
    expect(abstainThreshold(samples)).toBeUndefined();
    // Overlapping: the threshold stops where the budget ends.
    const overlap = [...served(range(100, 0.3, 0.005)), ...none(range(20, 0.1, 0.02))];
    const t = abstainThreshold(overlap, { maxServedLoss: 0.05 })!;
    const lost = overlap.filter((s) => s.served && s.score < t).length;
    expect(lost).toBeLessThanOrEqual(5);
    expect(overlap.filter((s) => !s.served && s.score < t).length).toBeGreaterThan(0);
  });

  it("has no threshold on too little traffic of either kind (off until calibrated)", () => {
    expect(abstainThreshold([...served(range(100, 0.5, 0.001)), ...none([0.1, 0.1])])).toBeUndefined();
    expect(abstainThreshold([...served(range(10, 0.5, 0.01)), ...none(range(20, 0.1, 0.001))])).toBeUndefined();
    expect(DEFAULT_ABSTAIN_OPTIONS.minNoTool).toBe(10);
  });

  it("labels a turn served, no tool, or neither when every call failed", () => {
    expect(abstainLabel({ servedBy: "a", calls: [{ tool: "a", outcome: "success" }] })).toBe(true);
    expect(abstainLabel({ calls: [] })).toBe(false);
    expect(abstainLabel({ calls: [{ tool: "a", outcome: "error" }] })).toBeUndefined();
  });
});

describe("calibrateAbstain", () => {
  it("routes the partition's own requests with the index as it is and fits the threshold on them", async () => {
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(
      ledger,
      [
        { name: "refund_order", description: "Refund an order to the original payment method." },
        { name: "track_shipment", description: "Track a parcel with the carrier's tracking number." },
      ],
      { partition: "p" },
    );
    const index = new ToolIndex({ ledger });
    const turns = [
      ...Array.from({ length: 60 }, (_, i) => ({
        request: i % 2 ? `refund my order number ${i}` : `track my parcel ${i}`,
        servedBy: i % 2 ? "refund_order" : "track_shipment",
        calls: [],
      })),
      ...Array.from({ length: 12 }, (_, i) => ({ request: `tell me a joke about cats ${i}`, calls: [] })),
    ];
    const t = await calibrateAbstain(index, "p", turns);
    expect(t).toBeDefined();
    const [joke] = await index.route("p", "tell me a joke about cats", { k: 1 });
    const [refund] = await index.route("p", "refund my order", { k: 1 });
    expect(joke?.score ?? Number.NEGATIVE_INFINITY).toBeLessThan(t!);
    expect(refund.score).toBeGreaterThan(t!);
  });
});
