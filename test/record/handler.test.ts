import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import {
  type BaseStore,
  InMemoryStore,
  MemorySaver,
  MessagesAnnotation,
  START,
  END,
  StateGraph,
} from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { UNREGISTERED_ARG, UNREGISTERED_TOOL } from "../../src/record/rows.js";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { InvalidInput } from "../../src/errors.js";
import { Ledger } from "../../src/ledger/ledger.js";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { requestIdFor } from "../../src/caller/request.js";
import {
  buildAgent,
  echoTool,
  echoTwiceAgent,
  planScript,
  ScriptedChatModel,
  shopTools,
  type PlannedCall,
} from "../helpers/record-agent.js";

function setup(plan: (step: number) => PlannedCall[] | undefined, options: { tokensPerStep?: number } = {}) {
  const store = new InMemoryStore();
  const ledger = new Ledger(store, { failureSink: () => undefined });
  const errors: ToolLessonsFailure[] = [];
  // Runs that name no caller go to `default`: this app has one caller.
  const handler = new ToolLessonsCallbackHandler({ ledger, singleTenant: true, failureSink: (f) => errors.push(f) });
  const graph = buildAgent({
    model: new ScriptedChatModel(planScript(plan, options)),
    tools: shopTools(),
    checkpointer: new MemorySaver(),
  });
  return { store, ledger, handler, graph, errors };
}

describe("ToolLessonsCallbackHandler on a real LangGraph agent", () => {
  it("records successes and tool errors with class, masked message, latency and tokens", async () => {
    const { ledger, handler, graph, errors } = setup(
      (step) =>
        [
          [
            { name: "lookup_order", args: { order_id: "918273" } },
            { name: "refund", args: { order_id: "ORD-918273", amount: 2500 } },
          ],
          [{ name: "lookup_order", args: { order_id: "ORD-918273" } }],
        ][step],
      { tokensPerStep: 100 },
    );
    await graph.invoke(
      { messages: [new HumanMessage("Where is my order ORD-918273?")] },
      { configurable: { thread_id: "t-1" }, metadata: { user_id: "42" }, callbacks: [handler] },
    );
    await handler.flush();
    expect(errors).toEqual([]);

    const calls = await ledger.listCalls("u:42");
    expect(calls.map((c) => [c.tool, c.outcome, c.errorClass])).toEqual([
      ["lookup_order", "error", "not_found"],
      ["refund", "error", "permission"],
      ["lookup_order", "success", undefined],
    ]);
    const [notFound, refused, ok] = calls;
    expect(notFound.errorMessage).toBe("Order <value> not found");
    expect(refused.errorMessage).toBe("Refund of <value> for <value> is not allowed: permission denied");
    expect(notFound.args).toEqual([{ name: "order_id", kind: "string", shape: "######" }]);
    expect(ok.args).toEqual([{ name: "order_id", kind: "string", shape: "ORD-######" }]);
    expect(ok.fingerprints.length).toBeGreaterThan(0);
    // 100 tokens for the first step, split over its two calls; the second step made one call.
    expect(calls.map((c) => c.tokens)).toEqual([50, 50, 100]);
    for (const c of calls) {
      expect(c.source).toBe("callback");
      expect(c.latencyMs).toBeGreaterThanOrEqual(0);
      expect(c.threadId).toBe("t-1");
      expect(c.partition).toBe("u:42");
      expect(c.request).toBe("Where is my order <value>?");
    }
    expect(new Set(calls.map((c) => c.runId)).size).toBe(1);
    expect(new Set(calls.map((c) => c.requestId)).size).toBe(1);
  });

  it("records calls refused by the tool's schema, which never reach tool callbacks", async () => {
    const { ledger, handler, graph } = setup(
      (step) =>
        [
          [{ name: "refund", args: { order_id: "ORD-918273", amount: "4821.77" } }],
          [{ name: "refund", args: { order_id: "ORD-918273", amount: 48.5 } }],
        ][step],
    );
    const onToolStart = vi.fn();
    await graph.invoke(
      { messages: [new HumanMessage("refund 4821.77 on ORD-918273")] },
      { configurable: { thread_id: "t-2" }, callbacks: [handler, { handleToolStart: onToolStart }] },
    );
    await handler.flush();
    // The refused call really did not reach the tool callbacks.
    expect(onToolStart).toHaveBeenCalledTimes(1);

    const calls = await ledger.listCalls("default");
    expect(calls).toHaveLength(2);
    const [invalid, valid] = calls;
    expect(invalid).toMatchObject({
      tool: "refund",
      outcome: "error",
      errorClass: "validation",
      source: "tool_message",
      args: [
        { name: "order_id", kind: "string", shape: "ORD-######" },
        { name: "amount", kind: "string", shape: "####.##" },
      ],
    });
    expect(invalid.errorMessage).toMatch(/did not match expected schema/);
    expect(invalid.errorMessage).not.toMatch(/4821/);
    expect(valid).toMatchObject({ tool: "refund", outcome: "success", source: "callback" });

    const [turn] = await ledger.listTurns("default");
    expect(turn.calls).toEqual([
      { tool: "refund", outcome: "error", errorClass: "validation" },
      { tool: "refund", outcome: "success" },
    ]);
  });

  it("records a call to a tool that does not exist as not_found, its name (the model's) masked", async () => {
    const { ledger, handler, graph } = setup((step) =>
      step === 0 ? [{ name: "refund_v2", args: { id: "ORD-1" } }] : undefined,
    );
    await graph.invoke(
      { messages: [new HumanMessage("refund")] },
      { configurable: { thread_id: "t" }, callbacks: [handler] },
    );
    await handler.flush();
    const [call] = await ledger.listCalls("default");
    expect(JSON.stringify(call)).not.toContain("refund_v2");
    expect(call).toMatchObject({
      tool: UNREGISTERED_TOOL,
      args: [{ name: UNREGISTERED_ARG }],
      outcome: "error",
      errorClass: "not_found",
      source: "tool_message",
    });
  });

  it("writes one turn per request with the calls in order and servedBy = last success", async () => {
    const { ledger, handler, graph } = setup(
      (step) =>
        [
          [{ name: "lookup_order", args: { order_id: "ORD-5" } }],
          [{ name: "send_email", args: { to: "bob@example.com", subject: "Your order", body: "Shipped" } }],
          [{ name: "refund", args: { order_id: "ORD-5", amount: 5000 } }],
        ][step],
    );
    const config = {
      configurable: { thread_id: "t-3" },
      metadata: { tenant_id: "acme", user_id: "7" },
      callbacks: [handler],
    };
    const state = await graph.invoke({ messages: [new HumanMessage("Tell bob@example.com about ORD-5")] }, config);
    await handler.flush();

    const turns = await ledger.listTurns("t:acme/u:7");
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({
      threadId: "t-3",
      request: "Tell <email> about <value>",
      servedBy: "send_email",
      calls: [
        { tool: "lookup_order", outcome: "success" },
        { tool: "send_email", outcome: "success" },
        { tool: "refund", outcome: "error", errorClass: "permission" },
      ],
    });
    // The id a node computes from its state joins the turn (and the route record) to the calls.
    expect(turns[0].requestId).toBe(requestIdFor("t-3", state.messages));
    const calls = await ledger.listCalls("t:acme/u:7");
    expect(new Set(calls.map((c) => c.requestId))).toEqual(new Set([turns[0].requestId]));

    // A second request on the same thread is a new turn with its own id.
    await graph.invoke({ messages: [new HumanMessage("thanks")] }, config);
    await handler.flush();
    const after = await ledger.listTurns("t:acme/u:7");
    expect(after).toHaveLength(2);
    expect(after[1].requestId).not.toBe(after[0].requestId);
    expect(after[1]).toMatchObject({ request: "thanks", threadId: "t-3" });
    // Only this run's calls: the previous turn's messages in the thread are not counted again.
    expect(after[1].calls).toHaveLength(3);
    expect(await ledger.listCalls("t:acme/u:7")).toHaveLength(6);
  });

  it("agrees with a node that computes requestIdFor from its own state", async () => {
    const seen: string[] = [];
    const model = new ScriptedChatModel(
      planScript((step) => (step === 0 ? [{ name: "echo", args: { n: 1 } }] : undefined)),
    );
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("route", (state, config) => {
        seen.push(requestIdFor(config.configurable?.thread_id as string | undefined, state.messages) ?? "none");
        return {};
      })
      .addNode("agent", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
      .addNode("tools", new ToolNode([echoTool]))
      .addEdge(START, "route")
      .addEdge("route", "agent")
      .addConditionalEdges("agent", toolsCondition, ["tools", END])
      .addEdge("tools", "agent")
      .compile();
    const ledger = new Ledger(new InMemoryStore());
    const handler = new ToolLessonsCallbackHandler({ ledger, singleTenant: true });
    // No checkpointer, a plain-object message: ids still agree.
    await graph.invoke({ messages: [{ role: "user", content: "echo one" }] }, { callbacks: [handler] });
    await handler.flush();
    const [turn] = await ledger.listTurns("default");
    expect(seen).toEqual([turn.requestId]);
  });

  it("takes the partition from metadata.user_id, or from a resolver", async () => {
    const { ledger, handler, graph } = setup((step) =>
      step === 0 ? [{ name: "lookup_order", args: { order_id: "ORD-1" } }] : undefined,
    );
    await Promise.all(
      ["a", "b", "a"].map((user, i) =>
        graph.invoke(
          { messages: [new HumanMessage(`hi ${i}`)] },
          { configurable: { thread_id: `p-${i}` }, metadata: { user_id: user }, callbacks: [handler] },
        ),
      ),
    );
    await handler.flush();
    expect(await ledger.listPartitions()).toEqual(["u:a", "u:b"]);
    expect(await ledger.listCalls("u:a")).toHaveLength(2);
    expect(await ledger.listCalls("u:b")).toHaveLength(1);

    const custom = new ToolLessonsCallbackHandler({
      ledger,
      partition: ({ metadata }) => ({ tenantId: String(metadata.org), agentId: "desk" }),
    });
    await graph.invoke(
      { messages: [new HumanMessage("hi")] },
      { configurable: { thread_id: "p-x" }, metadata: { org: "acme" }, callbacks: [custom] },
    );
    await custom.flush();
    expect(await ledger.listCalls("t:acme/a:desk")).toHaveLength(1);
  });

  it("records a tool invoked on its own (no graph) without a request", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const handler = new ToolLessonsCallbackHandler({ ledger });
    await echoTool.invoke({ n: 3 }, { callbacks: [handler], metadata: { user_id: "solo" } });
    await handler.flush();
    const [call] = await ledger.listCalls("u:solo");
    expect(call).toMatchObject({
      tool: "echo",
      outcome: "success",
      args: [{ name: "n", kind: "number", shape: "<number>" }],
    });
    expect(call.requestId).toBeUndefined();
    expect(await ledger.listTurns("u:solo")).toEqual([]);
  });

  it("works with awaitHandlers off: flush waits for LangChain's background callbacks", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const handler = new ToolLessonsCallbackHandler({ ledger, singleTenant: true, awaitHandlers: false });
    expect(handler.awaitHandlers).toBe(false);
    const graph = buildAgent({
      model: new ScriptedChatModel(
        planScript((step) => (step < 2 ? [{ name: "echo", args: { n: step } }] : undefined)),
      ),
      tools: [echoTool],
    });
    await graph.invoke({ messages: [new HumanMessage("go")] }, { callbacks: [handler] });
    await handler.flush();
    expect(await ledger.listCalls("default")).toHaveLength(2);
    expect(await ledger.listTurns("default")).toHaveLength(1);
  });

  it("never throws a ledger failure into the run: it goes to failureSink", async () => {
    class BrokenStore extends InMemoryStore {
      override async batch(): Promise<never> {
        throw new Error("disk full");
      }
    }
    const failureSink = vi.fn();
    const handler = new ToolLessonsCallbackHandler({
      ledger: new Ledger(new BrokenStore() as BaseStore),
      singleTenant: true,
      failureSink,
    });
    const graph = buildAgent({
      model: new ScriptedChatModel(planScript((step) => (step === 0 ? [{ name: "echo", args: { n: 1 } }] : undefined))),
      tools: [echoTool],
    });
    const state = await graph.invoke({ messages: [new HumanMessage("go")] }, { callbacks: [handler] });
    expect(state.messages.at(-1)?.content).toBe("done");
    // The store failed: the records are kept for the next try, not lost, and flush says so.
    await expect(handler.flush()).resolves.toEqual({ written: 0, inFlight: 2, lost: 0, timedOut: false });
    expect(failureSink).toHaveBeenCalledTimes(1);
    expect(failureSink.mock.calls[0][0]).toMatchObject({
      stage: "record",
      kind: "store_write",
      context: { records: 2 },
    });
    expect(handler.stats()).toMatchObject({ failed: 0, buffered: 2, storeFailing: true });
    expect(handler.stats().written).toEqual({ calls: 0, turns: 0 });
  });

  it("bounds its buffer: a run that finds it full waits for room (back-pressure), nothing is dropped", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const failureSink = vi.fn();
    // A long flush interval keeps everything in the buffer while the runs finish.
    const handler = new ToolLessonsCallbackHandler({
      ledger,
      maxBuffer: 5,
      flushEveryMs: 60_000,
      singleTenant: true,
      failureSink,
    });
    const graph = echoTwiceAgent();
    for (let i = 0; i < 3; i += 1)
      await graph.invoke({ messages: [new HumanMessage(`go ${i}`)] }, { callbacks: [handler] });
    // Each run is 3 records (2 calls + 1 turn): the first fits; each next one waited for the
    // buffer to be written (never more than maxBuffer in it), then went in.
    expect(handler.stats()).toMatchObject({ buffered: 3, dropped: 0, written: { calls: 4, turns: 2 } });
    expect(handler.dropped).toBe(0);
    expect(failureSink).not.toHaveBeenCalled();
    await handler.flush();
    expect(handler.stats()).toMatchObject({ buffered: 0, written: { calls: 6, turns: 3 } });
  });

  it("keeps a throwing partition resolver out of the run, and guesses no partition for it", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const failureSink = vi.fn();
    const handler = new ToolLessonsCallbackHandler({
      ledger,
      failureSink,
      partition: () => {
        throw new Error("resolver bug");
      },
    });
    await echoTool.invoke({ n: 1 }, { callbacks: [handler] });
    await handler.flush();
    expect(failureSink).toHaveBeenCalledWith(
      expect.objectContaining({ stage: "record", kind: "caller_refused", error: expect.any(Error) }),
    );
    expect(await ledger.listPartitions()).toEqual([]);
    expect(handler.stats().failed).toBe(1);
  });

  it("refuses ids that are not strings or finite numbers, instead of sharing 'default' among them", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const failureSink = vi.fn();
    const handler = new ToolLessonsCallbackHandler({ ledger, failureSink });
    const bad: unknown[] = [10n, { id: 1 }, ["a"], Number.NaN, true, null, "", "  ", "a\u0000b", "x\uD800"];
    for (const user_id of bad) await echoTool.invoke({ n: 1 }, { callbacks: [handler], metadata: { user_id } });
    await echoTool.invoke({ n: 2 }, { callbacks: [handler], metadata: { user_id: "u-7" } });
    await echoTool.invoke({ n: 3 }, { callbacks: [handler], metadata: { user_id: " u-7" } });
    await handler.flush();
    // Said once (the kind), counted every time.
    expect(failureSink).toHaveBeenCalledTimes(1);
    expect(failureSink.mock.calls[0][0]).toMatchObject({ stage: "record", kind: "caller_refused" });
    expect(failureSink.mock.calls[0][0].error).toBeInstanceOf(InvalidInput);
    expect(handler.stats().failed).toBe(bad.length);
    // Two different non-blank ids never merge.
    expect(await ledger.listPartitions()).toEqual(["u:%20u-7", "u:u-7"]);
  });

  it("records the same way through graph.stream and createReactAgent", async () => {
    const { createReactAgent } = await import("@langchain/langgraph/prebuilt");
    const plan = (step: number) =>
      step === 0
        ? [
            { name: "refund", args: { order_id: "ORD-1", amount: "ten" } },
            { name: "lookup_order", args: { order_id: "ORD-1" } },
          ]
        : undefined;
    const ledger = new Ledger(new InMemoryStore());
    const handler = new ToolLessonsCallbackHandler({ ledger });

    const agent = createReactAgent({ llm: new ScriptedChatModel(planScript(plan)), tools: shopTools() });
    await agent.invoke(
      { messages: [new HumanMessage("react")] },
      { metadata: { user_id: "react" }, callbacks: [handler] },
    );

    const graph = buildAgent({ model: new ScriptedChatModel(planScript(plan)), tools: shopTools() });
    const stream = await graph.stream(
      { messages: [new HumanMessage("stream")] },
      { metadata: { user_id: "stream" }, callbacks: [handler] },
    );
    for await (const _chunk of stream) {
      // drain
    }
    await handler.flush();
    for (const partition of ["u:react", "u:stream"]) {
      const calls = await ledger.listCalls(partition);
      expect(calls.map((c) => [c.tool, c.outcome, c.errorClass, c.source])).toEqual([
        ["refund", "error", "validation", "tool_message"],
        ["lookup_order", "success", undefined, "callback"],
      ]);
      const [turn] = await ledger.listTurns(partition);
      expect(turn.servedBy).toBe("lookup_order");
    }
  });

  it("does not count LangGraph interrupts raised inside a tool as failures", async () => {
    const { interrupt } = await import("@langchain/langgraph");
    const ask = tool(async () => interrupt("confirm?"), { name: "ask", description: "Ask.", schema: z.object({}) });
    const ledger = new Ledger(new InMemoryStore());
    const handler = new ToolLessonsCallbackHandler({ ledger, singleTenant: true });
    const graph = buildAgent({
      model: new ScriptedChatModel(planScript((step) => (step === 0 ? [{ name: "ask", args: {} }] : undefined))),
      tools: [ask],
      checkpointer: new MemorySaver(),
    });
    await graph.invoke(
      { messages: [new HumanMessage("go")] },
      { configurable: { thread_id: "i" }, callbacks: [handler] },
    );
    await handler.flush();
    expect(await ledger.listCalls("default")).toEqual([]);
    expect(handler.stats().openRuns).toBe(0);
  });

  it("joins a resumed run to the request it paused on", async () => {
    const { Command, interrupt } = await import("@langchain/langgraph");
    const ask = tool(async ({ question }) => `answer ${String(interrupt(question))}`, {
      name: "ask",
      description: "Ask the user.",
      schema: z.object({ question: z.string() }),
    });
    const ledger = new Ledger(new InMemoryStore());
    const handler = new ToolLessonsCallbackHandler({ ledger, singleTenant: true });
    const graph = buildAgent({
      model: new ScriptedChatModel(
        planScript((step) => (step === 0 ? [{ name: "ask", args: { question: "Refund ORD-77?" } }] : undefined)),
      ),
      tools: [ask],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "pause" }, callbacks: [handler] };
    await graph.invoke({ messages: [new HumanMessage("refund ORD-77")] }, config);
    await graph.invoke(new Command({ resume: "yes" }), config);
    await handler.flush();
    const turns = await ledger.listTurns("default");
    expect(turns.map((t) => t.calls.length)).toEqual([0, 1]);
    expect(turns[0].requestId).toBe(turns[1].requestId);
    const [call] = await ledger.listCalls("default");
    expect(call).toMatchObject({ tool: "ask", outcome: "success", requestId: turns[0].requestId });
    // The resumed run never saw the model step; the call still has its arguments' shapes.
    expect(call.args).toEqual([{ name: "question", kind: "string", shape: "<text>" }]);
  });
});
