import { tool } from "@langchain/core/tools";
import { InMemoryStore, type Operation } from "@langchain/langgraph";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { Ledger } from "../../src/ledger/ledger.js";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";

const anyTool = (name: string) =>
  tool(async () => "ok", { name, description: "Takes anything.", schema: z.object({}).passthrough() });

/** A store that refuses any batch touching one tool's call rows, as a store refuses a value it cannot hold. */
class RefusingStore extends InMemoryStore {
  batches = 0;
  override async batch<Op extends readonly Operation[]>(operations: Op) {
    this.batches += 1;
    if (operations.some((op) => "namespace" in op && op.namespace.some((label) => label.includes("poisoned"))))
      throw new Error("the store refused a row");
    return super.batch(operations);
  }
}

describe("one bad record never takes others with it", () => {
  it("a batch refused by the store is written again row by row: only the bad record is lost", async () => {
    const store = new RefusingStore();
    const ledger = new Ledger(store, { failureSink: () => undefined });
    const errors: ToolLessonsFailure[] = [];
    const handler = new ToolLessonsCallbackHandler({ ledger, singleTenant: true, failureSink: (f) => errors.push(f) });
    for (let i = 0; i < 5; i++) await anyTool("good").invoke({ i }, { callbacks: [handler] });
    await anyTool("poisoned").invoke({}, { callbacks: [handler] });
    for (let i = 0; i < 5; i++) await anyTool("good").invoke({ i }, { callbacks: [handler] });
    await handler.flush();
    expect(await ledger.listCalls("default", { tool: "good" })).toHaveLength(10);
    expect(handler.stats().failed).toBe(1);
    expect(handler.stats().written.calls).toBe(10);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ stage: "record", kind: "bad_record", context: { records: 1 } });
  });

  it("a tool name no store can key by is refused alone", async () => {
    const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
    const handler = new ToolLessonsCallbackHandler({ ledger, singleTenant: true, failureSink: () => undefined });
    await anyTool("bad\uD800name").invoke({}, { callbacks: [handler] });
    await anyTool("x".repeat(100_000)).invoke({}, { callbacks: [handler] });
    await anyTool("fine").invoke({}, { callbacks: [handler] });
    await handler.flush();
    expect(handler.stats().failed).toBe(2);
    expect((await ledger.listCalls("default")).map((c) => c.tool)).toEqual(["fine"]);
  });

  it("a call whose input LangChain cannot serialize (a BigInt) is counted and reported, not silently lost", async () => {
    const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
    const errors: ToolLessonsFailure[] = [];
    const handler = new ToolLessonsCallbackHandler({ ledger, singleTenant: true, failureSink: (f) => errors.push(f) });
    const out = await anyTool("big").invoke({ n: 10n } as never, { callbacks: [handler] });
    await handler.flush();
    expect(out).toBe("ok");
    expect(handler.stats().failed).toBe(1);
    expect(errors.map((f) => [f.kind, f.context])).toEqual([["unseen_start", { event: "handleToolEnd", records: 1 }]]);
    expect(errors[0].message).toMatch(/BigInt/);
  });

  it("what reaches failureSink is redacted: a store error quoting a value does not carry it", async () => {
    class LeakyStore extends InMemoryStore {
      override async batch<Op extends readonly Operation[]>(_operations: Op): Promise<never> {
        throw new Error('insert failed for {"email":"margaret.whitfield@example.org","card":"4111 1111 1111 1111"}');
      }
    }
    const ledger = new Ledger(new LeakyStore(), { failureSink: () => undefined });
    const errors: unknown[] = [];
    const handler = new ToolLessonsCallbackHandler({
      ledger,
      singleTenant: true,
      failureSink: (f) => errors.push(f.error),
    });
    await anyTool("t").invoke({}, { callbacks: [handler] });
    await handler.flush();
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      const text = `${String(error)} ${(error as Error).stack ?? ""} ${JSON.stringify(error)}`;
      expect(text).not.toContain("margaret");
      expect(text).not.toContain("4111");
      expect((error as Error).cause).toBeUndefined();
    }
  });
});

/** An error as node-postgres raises it when the server ends the backend (`pg_terminate_backend`). */
function terminated(): Error {
  return Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });
}

/**
 * A store whose writes of call rows follow a plan, one entry per write: `ok`, a connection fault,
 * or a plain store error. Reads, and writes past the plan, pass.
 */
class PlannedStore extends InMemoryStore {
  writes = 0;
  constructor(private readonly plan: ("ok" | "dropped" | "closed" | "refused")[]) {
    super();
  }

  override async batch<Op extends readonly Operation[]>(operations: Op) {
    const writesCalls = operations.some(
      (op) => "namespace" in op && "value" in op && op.value !== null && op.namespace.includes("calls"),
    );
    if (writesCalls) {
      const step = this.plan[this.writes++] ?? "ok";
      if (step === "dropped") throw terminated();
      if (step === "closed") throw new Error("Connection terminated unexpectedly");
      if (step === "refused") throw new Error("the store refused the batch");
    }
    return super.batch(operations);
  }
}

describe("no record lost to a dropped connection", () => {
  async function record(plan: ConstructorParameters<typeof PlannedStore>[0]) {
    const store = new PlannedStore(plan);
    const ledger = new Ledger(store, { failureSink: () => undefined });
    const heard: ToolLessonsFailure[] = [];
    const handler = new ToolLessonsCallbackHandler({
      ledger,
      singleTenant: true,
      flushEveryMs: 60_000,
      maxRetryDelayMs: 20,
      failureSink: (f) => heard.push(f),
    });
    // Five single-call runs, written as one batch of five rows.
    for (let i = 0; i < 5; i++) await anyTool("good").invoke({ i }, { callbacks: [handler] });
    return { store, ledger, handler, heard };
  }

  it("a batch that failed on the connection is retried whole: every row stored once, none counted bad", async () => {
    const { store, ledger, handler, heard } = await record(["dropped"]);
    const first = await handler.flush();
    // The try failed on the connection: the rows are kept (in flight), not lost, not tried one by one.
    expect(first).toMatchObject({ written: 0, inFlight: 5, lost: 0 });
    expect(store.writes).toBe(1);
    await vi.waitFor(() => expect(handler.stats()).toMatchObject({ buffered: 0, storeFailing: false }));
    expect(handler.stats()).toMatchObject({ written: { calls: 5 }, failed: 0, dropped: 0 });
    expect(await ledger.listCalls("default")).toHaveLength(5);
    expect(heard.map((f) => f.kind)).toEqual(["store_write"]);
  });

  it("a row that fails alone on the connection while others were written is retried, not a bad record", async () => {
    // The batch fails for a reason the writer cannot read (row by row then), then the second and
    // fourth rows lose their connection while the others are written.
    const { ledger, handler, heard } = await record(["refused", "ok", "dropped", "ok", "closed", "ok"]);
    await handler.flush();
    await vi.waitFor(() => expect(handler.stats()).toMatchObject({ buffered: 0, storeFailing: false }));
    expect(handler.stats()).toMatchObject({ written: { calls: 5 }, failed: 0, dropped: 0 });
    const calls = await ledger.listCalls("default");
    expect(calls).toHaveLength(5);
    expect(new Set(calls.map((c) => c.id)).size).toBe(5);
    expect(heard.map((f) => f.kind)).not.toContain("bad_record");
  });

  it("a row the store refuses alone while others are written is still a bad record (and only it)", async () => {
    const { ledger, handler, heard } = await record(["refused", "ok", "refused", "ok", "ok", "ok"]);
    expect(await handler.flush()).toMatchObject({ written: 4, inFlight: 0, lost: 1 });
    expect(handler.stats()).toMatchObject({ written: { calls: 4 }, failed: 1 });
    expect(await ledger.listCalls("default")).toHaveLength(4);
    expect(heard.map((f) => f.kind)).toEqual(["bad_record"]);
  });
});
