import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { InMemoryStore } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { ThreadCallers } from "../../src/caller/thread-callers.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import type { ToolLessonsCallbackHandlerOptions } from "../../src/record/options.js";

/**
 * No silent pooling: callbacks see only `metadata` (LangGraph copies `thread_id` and a few keys of
 * its own from `configurable`, never the app's ids, never v1 `context`), so a recorder-only agent
 * whose callers are named in `configurable` or `context` must not file them all under `default`.
 */

const lookup = tool(async ({ order }: { order: string }) => `order ${order}: shipped`, {
  name: "lookup_order",
  description: "Look up an order.",
  schema: z.object({ order: z.string() }),
});

/** A model that calls lookup_order once, then answers. */
const scripted = () =>
  fakeModel()
    .respondWithTools([{ name: "lookup_order", args: { order: "A-1" }, id: "call-1" }])
    .respond(new AIMessage("done"));

function recorder(options: Partial<ToolLessonsCallbackHandlerOptions> = {}) {
  const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
  const heard: ToolLessonsFailure[] = [];
  const handler = new ToolLessonsCallbackHandler({ ledger, failureSink: (f) => heard.push(f), ...options });
  return { ledger, handler, heard };
}

/** Two callers, two turns each; every run: one call and one turn (2 records). */
const RUNS = [
  ["alice", "t-a"],
  ["bob", "t-b"],
  ["alice", "t-a"],
  ["bob", "t-b"],
] as const;

describe("a recorder-only agent whose caller the callbacks cannot see", () => {
  it("createReactAgent, caller in configurable: nothing under default, the sink hears why once", async () => {
    const { ledger, handler, heard } = recorder();
    for (const [user_id, thread_id] of RUNS) {
      const agent = createReactAgent({ llm: scripted(), tools: [lookup] });
      const state = await agent.invoke(
        { messages: [new HumanMessage("Where is order A-1?")] },
        { configurable: { thread_id, user_id }, callbacks: [handler] },
      );
      expect(state.messages.at(-1)?.content).toBe("done");
    }
    expect(await handler.flush()).toMatchObject({ written: 0, inFlight: 0 });
    expect(await ledger.listPartitions()).toEqual([]);
    expect(await ledger.listCalls("default")).toEqual([]);
    expect(handler.stats()).toMatchObject({ withheld: 2 * RUNS.length, failed: 0, written: { calls: 0, turns: 0 } });
    expect(heard.map((f) => [f.stage, f.kind])).toEqual([["record", "caller_unseen"]]);
    expect(heard[0].message).toMatch(/metadata/);
    expect(heard[0].message).toMatch(/singleTenant/);
    // The callers' ids never reach the sink.
    expect(JSON.stringify(heard)).not.toMatch(/alice|bob/);
  });

  it("createAgent (langchain v1), caller in context: nothing under default, the sink hears why once", async () => {
    const { ledger, handler, heard } = recorder();
    for (const [user_id, thread_id] of RUNS) {
      const agent = createAgent({
        model: scripted(),
        tools: [lookup],
        contextSchema: z.object({ user_id: z.string() }),
      });
      const state = await agent.invoke(
        { messages: [new HumanMessage("Where is order A-1?")] },
        { configurable: { thread_id }, context: { user_id }, callbacks: [handler] },
      );
      expect(state.messages.at(-1)?.content).toBe("done");
    }
    await handler.flush();
    expect(await ledger.listPartitions()).toEqual([]);
    expect(handler.stats()).toMatchObject({ withheld: 2 * RUNS.length, written: { calls: 0, turns: 0 } });
    expect(heard.map((f) => f.kind)).toEqual(["caller_unseen"]);
  });

  it("the same agents with the caller also in metadata: each caller in its own partition, nothing said", async () => {
    const { ledger, handler, heard } = recorder();
    for (const [user_id, thread_id] of RUNS) {
      const agent = createAgent({ model: scripted(), tools: [lookup] });
      await agent.invoke(
        { messages: [new HumanMessage("Where is order A-1?")] },
        { configurable: { thread_id }, context: { user_id }, metadata: { user_id }, callbacks: [handler] },
      );
    }
    await handler.flush();
    expect(await ledger.listPartitions()).toEqual(["u:alice", "u:bob"]);
    expect(await ledger.listCalls("u:alice")).toHaveLength(2);
    expect(await ledger.listTurns("u:bob")).toHaveLength(2);
    expect(heard).toEqual([]);
  });

  it("a thread whose caller a node named is filed there, without metadata", async () => {
    const callers = new ThreadCallers();
    const { ledger, handler, heard } = recorder({ callers });
    callers.remember("t-a", "u:alice");
    for (const [user_id, thread_id] of RUNS) {
      const agent = createReactAgent({ llm: scripted(), tools: [lookup] });
      await agent.invoke(
        { messages: [new HumanMessage("Where is order A-1?")] },
        { configurable: { thread_id, user_id }, callbacks: [handler] },
      );
    }
    await handler.flush();
    // alice's thread was named; bob's was not, and is kept apart, not pooled.
    expect(await ledger.listPartitions()).toEqual(["u:alice"]);
    expect(await ledger.listCalls("u:alice")).toHaveLength(2);
    expect(handler.stats()).toMatchObject({ withheld: 4, written: { calls: 2, turns: 2 } });
    expect(heard.map((f) => f.kind)).toEqual(["caller_unseen"]);
  });
});

describe("an app that names no caller at all", () => {
  it("records under default when it says so (singleTenant), with createReactAgent and createAgent", async () => {
    const { ledger, handler, heard } = recorder({ singleTenant: true });
    await createReactAgent({ llm: scripted(), tools: [lookup] }).invoke(
      { messages: [new HumanMessage("Where is order A-1?")] },
      { configurable: { thread_id: "t-1" }, callbacks: [handler] },
    );
    await createAgent({ model: scripted(), tools: [lookup] }).invoke(
      { messages: [new HumanMessage("Where is order A-1?")] },
      { callbacks: [handler] },
    );
    expect(await handler.flush()).toMatchObject({ written: 4, lost: 0 });
    expect(await ledger.listPartitions()).toEqual(["default"]);
    expect(await ledger.listCalls("default")).toHaveLength(2);
    expect(await ledger.listTurns("default")).toHaveLength(2);
    expect(heard).toEqual([]);
  });

  it("a caller named in metadata still gets its own partition under singleTenant", async () => {
    const { ledger, handler } = recorder({ singleTenant: true });
    await createReactAgent({ llm: scripted(), tools: [lookup] }).invoke(
      { messages: [new HumanMessage("Where is order A-1?")] },
      { configurable: { thread_id: "t-1" }, metadata: { user_id: "carol" }, callbacks: [handler] },
    );
    await handler.flush();
    expect(await ledger.listPartitions()).toEqual(["u:carol"]);
  });
});
