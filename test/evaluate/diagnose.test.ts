import { describe, expect, it } from "vitest";
import type { ConfusionMatrix } from "../../src/evaluate/confusion.js";
import { diagnose } from "../../src/evaluate/diagnose.js";

/** A matrix from a sparse list of cells over `labels` (null last). */
function matrix(labels: (string | null)[], cells: [string | null, string | null, number][]): ConfusionMatrix {
  const counts = labels.map(() => labels.map(() => 0));
  for (const [row, col, n] of cells) counts[labels.indexOf(row)][labels.indexOf(col)] += n;
  return { labels, counts };
}

const TOOLS = ["docs", "kb", "orders", "refunds", "shipping", "weather", null];

describe("diagnoses of the off-diagonal", () => {
  it("a dense pair: both tools named, the larger direction first, fix both with mutual boundaries", () => {
    const m = matrix(TOOLS, [
      ["docs", "docs", 10],
      ["docs", "kb", 6],
      ["kb", "kb", 12],
      ["kb", "docs", 3],
      ["orders", "orders", 20],
    ]);
    const [pair, ...rest] = diagnose({ matrix: m, runs: 1, mode: "chat-model" });
    expect(rest).toEqual([]);
    expect(pair.kind).toBe("dense_pair");
    expect(pair.tools).toEqual(["docs", "kb"]);
    expect(pair.errors).toBe(9);
    expect(pair.share).toBeCloseTo(9 / 31);
    expect(pair.finding).toContain("6 of docs's turns went to kb and 3 of kb's to docs");
    expect(pair.fix).toMatch(/boundary sentence naming the other.*Fixing one alone tends to move the error/);
    expect(pair.cells).toEqual([
      { row: "docs", column: "kb", count: 6 },
      { row: "kb", column: "docs", count: 3 },
    ]);
  });

  it("counts cases, not outcomes: the same errors over 3 runs are 1 case each, under the threshold", () => {
    const m = matrix(TOOLS, [
      ["docs", "docs", 20],
      ["docs", "kb", 3],
      ["kb", "kb", 20],
    ]);
    expect(diagnose({ matrix: m, runs: 1, mode: "chat-model" }).map((d) => d.kind)).toEqual(["dense_pair"]);
    expect(diagnose({ matrix: m, runs: 3, mode: "chat-model" })).toEqual([]);
  });

  it("a scattered row: its turns go to many answers, none taking most", () => {
    const m = matrix(TOOLS, [
      ["refunds", "refunds", 4],
      ["refunds", "orders", 2],
      ["refunds", "shipping", 2],
      ["refunds", "docs", 1],
      ["refunds", null, 1],
      ["orders", "orders", 30],
      ["shipping", "shipping", 30],
      ["docs", "docs", 30],
    ]);
    const found = diagnose({ matrix: m, runs: 1, mode: "chat-model" });
    const scattered = found.find((d) => d.kind === "scattered_row")!;
    expect(scattered.tools).toEqual(["refunds"]);
    expect(scattered.errors).toBe(6);
    expect(scattered.finding).toMatch(
      /refunds's turns scatter: 6 of 10 outcomes \(60%\) went to 4 different answers \(orders 2, shipping 2, docs 1, no tool 1\)/,
    );
    expect(scattered.fix).toContain("trigger cannot be told from the users' words");
    // Most errors into one column is a pair, not a scatter.
    const one = matrix(TOOLS, [
      ["refunds", "refunds", 4],
      ["refunds", "orders", 5],
      ["refunds", "shipping", 1],
      ["refunds", "docs", 1],
    ]);
    expect(diagnose({ matrix: one, runs: 1, mode: "chat-model" }).map((d) => d.kind)).toEqual(["dense_pair"]);
  });

  it("errors in the null column: answered from its own knowledge, a system-prompt problem (chat model)", () => {
    const m = matrix(TOOLS, [
      ["weather", "weather", 5],
      ["weather", null, 4],
      ["orders", null, 2],
      ["orders", "orders", 10],
      [null, null, 5],
    ]);
    const [d] = diagnose({ matrix: m, runs: 1, mode: "chat-model" });
    expect(d.kind).toBe("null_column");
    expect(d.tools).toEqual(["weather", "orders"]);
    expect(d.errors).toBe(6);
    expect(d.finding).toContain("answered from its own knowledge");
    expect(d.fix).toContain("system-prompt problem, not a description problem");
    // The router's wording: a minScore too high.
    const [r] = diagnose({ matrix: m, runs: 1, mode: "router", minScore: 0.4 });
    expect(r.finding).toContain("no tool at or above minScore 0.4");
    expect(r.fix).toContain("Lower minScore");
  });

  it("errors in the null row: calls tools when it should chat, check for a forced tool choice", () => {
    const m = matrix(TOOLS, [
      [null, null, 4],
      [null, "weather", 3],
      [null, "docs", 1],
      ["docs", "docs", 10],
    ]);
    const [d] = diagnose({ matrix: m, runs: 1, mode: "chat-model" });
    expect(d.kind).toBe("null_row");
    expect(d.tools).toEqual(["weather", "docs"]);
    expect(d.share).toBeCloseTo(0.5);
    expect(d.finding).toContain("it calls tools when it should chat");
    expect(d.fix).toContain('forced tool choice (tool_choice "required" or "any")');
    const [r] = diagnose({ matrix: m, runs: 1, mode: "router" });
    expect(r.fix).toContain("Without minScore the router always offers a tool");
  });

  it("a clean diagonal says nothing", () => {
    const m = matrix(TOOLS, [
      ["docs", "docs", 9],
      ["kb", "kb", 9],
      [null, null, 9],
      ["docs", "kb", 1],
    ]);
    expect(diagnose({ matrix: m, runs: 1, mode: "chat-model" })).toEqual([]);
  });
});

describe("duplicate tools", () => {
  it("two copies confused both ways are duplicates to merge or rename, never a dense pair to fence", () => {
    const labels = ["docs", "docs_copy", "kb", null];
    const m = matrix(labels, [
      ["docs", "docs", 5],
      ["docs", "docs_copy", 5],
      ["docs_copy", "docs_copy", 4],
      ["docs_copy", "docs", 6],
      ["kb", "kb", 10],
    ]);
    // Without the duplicate groups, the same matrix reads as a dense pair.
    expect(diagnose({ matrix: m, runs: 1, mode: "router" }).map((d) => d.kind)).toEqual(["dense_pair"]);
    const found = diagnose({ matrix: m, runs: 1, mode: "router", duplicates: [["docs", "docs_copy"]] });
    expect(found.map((d) => d.kind)).toEqual(["duplicate_tools"]);
    const [dup] = found;
    expect(dup.tools).toEqual(["docs", "docs_copy"]);
    expect(dup.errors).toBe(11);
    expect(dup.share).toBeCloseTo(11 / 20);
    expect(dup.finding).toBe(
      "docs and docs_copy have the same description and argument schema: nothing a model or the router reads tells them apart (11 of their 20 outcomes went from one to another).",
    );
    expect(dup.fix).toMatch(/^Merge them into one tool; or, if they do different jobs, rename them/);
    expect(dup.fix).toContain('"Not for" lines cannot separate two tools that read the same');
    expect(dup.cells).toEqual([
      { row: "docs_copy", column: "docs", count: 6 },
      { row: "docs", column: "docs_copy", count: 5 },
    ]);
  });

  it("reports a group of copies even when no case confused them, and still finds other dense pairs", () => {
    const labels = ["a", "a2", "a3", "kb", "orders", null];
    const m = matrix(labels, [
      ["kb", "kb", 10],
      ["kb", "orders", 4],
      ["orders", "orders", 10],
      ["orders", "kb", 3],
    ]);
    const found = diagnose({ matrix: m, runs: 1, mode: "chat-model", duplicates: [["a", "a2", "a3"]] });
    expect(found.map((d) => [d.kind, d.tools])).toEqual([
      ["duplicate_tools", ["a", "a2", "a3"]],
      ["dense_pair", ["kb", "orders"]],
    ]);
    expect(found[0]).toMatchObject({ errors: 0, share: 0, cells: [] });
    expect(found[0].finding).toBe(
      "a, a2, a3 have the same description and argument schema: nothing a model or the router reads tells them apart.",
    );
  });
});
