import { tool } from "@langchain/core/tools";
import { InMemoryStore, type Operation } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
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
    const ledger = new Ledger(store, { onWarning: () => undefined });
    const errors: ToolLessonsFailure[] = [];
    const handler = new ToolLessonsCallbackHandler({ ledger, singleTenant: true, onFailure: (f) => errors.push(f) });
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
    const ledger = new Ledger(new InMemoryStore(), { onWarning: () => undefined });
    const handler = new ToolLessonsCallbackHandler({ ledger, singleTenant: true, onFailure: () => undefined });
    await anyTool("bad\uD800name").invoke({}, { callbacks: [handler] });
    await anyTool("x".repeat(100_000)).invoke({}, { callbacks: [handler] });
    await anyTool("fine").invoke({}, { callbacks: [handler] });
    await handler.flush();
    expect(handler.stats().failed).toBe(2);
    expect((await ledger.listCalls("default")).map((c) => c.tool)).toEqual(["fine"]);
  });

  it("a call whose input LangChain cannot serialize (a BigInt) is counted and reported, not silently lost", async () => {
    const ledger = new Ledger(new InMemoryStore(), { onWarning: () => undefined });
    const errors: ToolLessonsFailure[] = [];
    const handler = new ToolLessonsCallbackHandler({ ledger, singleTenant: true, onFailure: (f) => errors.push(f) });
    const out = await anyTool("big").invoke({ n: 10n } as never, { callbacks: [handler] });
    await handler.flush();
    expect(out).toBe("ok");
    expect(handler.stats().failed).toBe(1);
    expect(errors.map((f) => [f.kind, f.context])).toEqual([["unseen_start", { event: "handleToolEnd", records: 1 }]]);
    expect(errors[0].message).toMatch(/BigInt/);
  });

  it("what reaches onFailure is redacted: a store error quoting a value does not carry it", async () => {
    class LeakyStore extends InMemoryStore {
      override async batch<Op extends readonly Operation[]>(_operations: Op): Promise<never> {
        throw new Error('insert failed for {"email":"margaret.whitfield@example.org","card":"4111 1111 1111 1111"}');
      }
    }
    const ledger = new Ledger(new LeakyStore(), { onWarning: () => undefined });
    const errors: unknown[] = [];
    const handler = new ToolLessonsCallbackHandler({
      ledger,
      singleTenant: true,
      onFailure: (f) => errors.push(f.error),
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
