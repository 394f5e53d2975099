import { InMemoryStore, type Operation } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { DEFAULT_FAILURE_SINK, type ToolLessonsFailure } from "../../src/failure.js";
import { DEFAULT_NAMESPACE_ROOT, encodeLabel } from "../../src/ledger/keys.js";
import { DEFAULT_LEDGER_OPTIONS, Ledger } from "../../src/ledger/ledger.js";
import type { CallRecord, NewRecord } from "../../src/ledger/schema.js";

/** A ledger over a fresh store whose failures are collected. */
function setup() {
  const store = new InMemoryStore();
  const failures: ToolLessonsFailure[] = [];
  const ledger = new Ledger(store, { failureSink: (f) => failures.push(f) });
  return { store, ledger, failures };
}

describe("the ledger's failures, through the one sink shape", () => {
  it("reports each skipped row once (the one dedup policy: per kind and row), and counts every skip", async () => {
    const { store, ledger, failures } = setup();
    await store.put([DEFAULT_NAMESPACE_ROOT, encodeLabel("p"), "reviews"], "broken", { through: 42 });
    await ledger.reviewMarks("p");
    await ledger.reviewMarks("p");
    expect(ledger.skippedRows).toBe(2);
    expect(failures.map((f) => [f.stage, f.kind])).toEqual([["ledger", "row_skipped"]]);
    expect(failures[0].context).toMatchObject({ key: "broken" });
    // Another broken row is another report.
    await store.put([DEFAULT_NAMESPACE_ROOT, encodeLabel("p"), "reviews"], "broken-too", { through: 43 });
    await ledger.reviewMarks("p");
    expect(ledger.skippedRows).toBe(4);
    expect(failures.map((f) => f.context?.key)).toEqual(["broken", "broken-too"]);
  });

  it("redacts the context's strings and the error: no value reaches the sink", async () => {
    const { store, ledger, failures } = setup();
    await store.put([DEFAULT_NAMESPACE_ROOT, encodeLabel("p"), "reviews"], "sarah@example.com", { through: 42 });
    await ledger.reviewMarks("p");
    expect(failures).toHaveLength(1);
    expect(failures[0].kind).toBe("row_skipped");
    expect(JSON.stringify(failures[0].context)).not.toContain("sarah@example.com");

    const failing = new InMemoryStore();
    const batch = failing.batch.bind(failing);
    failing.batch = (async (ops: Operation[]) => {
      if (ops.some((op) => "value" in op && op.value === null)) throw new Error("delete failed for sarah@example.com");
      return batch(ops);
    }) as InMemoryStore["batch"];
    const seen: ToolLessonsFailure[] = [];
    const flaky = new Ledger(failing, { failureSink: (f) => seen.push(f) });
    await flaky.configure("p", { retainCallsPerTool: 20 });
    const call: NewRecord<CallRecord> = {
      partition: "p",
      tool: "search",
      runId: "run",
      args: [],
      fingerprints: [],
      outcome: "success",
      source: "callback",
    };
    await flaky.appendCalls(Array.from({ length: 30 }, () => ({ ...call })));
    const [prune] = seen;
    expect(prune).toMatchObject({ stage: "ledger", kind: "prune_failed" });
    expect(prune.error).toBeInstanceOf(Error);
    expect(prune.error?.message).toContain("delete failed");
    expect(prune.error?.message).not.toContain("sarah@example.com");
    expect(prune.error?.stack ?? "").not.toContain("sarah@example.com");
  });

  it("a sink that throws is ignored: the listing still answers", async () => {
    const store = new InMemoryStore();
    const ledger = new Ledger(store, {
      failureSink: () => {
        throw new Error("sink down");
      },
    });
    await ledger.markReviewed("p", new Map([["search", "id-1"]]));
    await store.put([DEFAULT_NAMESPACE_ROOT, encodeLabel("p"), "reviews"], "broken", { through: 42 });
    expect(await ledger.reviewMarks("p")).toEqual(new Map([["search", "id-1"]]));
    expect(ledger.skippedRows).toBe(1);
  });

  it("defaults to the package's one default sink", () => {
    expect(DEFAULT_LEDGER_OPTIONS.failureSink).toBe(DEFAULT_FAILURE_SINK);
  });
});
