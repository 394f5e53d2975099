import type { RunnableConfig } from "@langchain/core/runnables";
import { BaseStore, END, InMemoryStore, MemorySaver, type Operation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { createLessonsGraph, lessonsMessages, routedToolsOf } from "../../src/graph/lessons-graph.js";
import { ToolLessonsAnnotation, type ToolLessonsState } from "../../src/graph/state.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { registerTools } from "../../src/learn/register.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { callsOfTurn, DeskModel, deskTools, human } from "./desk.js";

/**
 * The lessons subgraph in a hand-built StateGraph (lessons → agent → ToolNode → agent), with a
 * checkpointer, over several turns and threads: what it learns changes what the model does next.
 */

/** An InMemoryStore that counts the searches of each collection, and can be made to fail. */
class WatchedStore extends BaseStore {
  readonly inner = new InMemoryStore();
  searches = new Map<string, number>();
  failing = false;
  override async batch<Op extends Operation[]>(ops: Op): Promise<never> {
    if (this.failing) throw new Error("store down: connection refused");
    for (const op of ops) {
      if ("namespacePrefix" in op) {
        const collection = op.namespacePrefix[2] ?? "";
        this.searches.set(collection, (this.searches.get(collection) ?? 0) + 1);
      }
    }
    return (await this.inner.batch(ops)) as never;
  }
}

async function desk(options: { autoApply?: boolean; memoryEvery?: number } = {}) {
  const store = new WatchedStore();
  const ledger = new Ledger(store, { onWarning: () => undefined });
  const tools = deskTools();
  for (const partition of ["u:alice", "u:bob"]) {
    await registerTools(ledger, tools, { partition });
    await ledger.configure(partition, { routingK: 2, minEvaluatedCalls: 1, memoryRecent: 5 });
  }
  const model = new DeskModel();
  const errors: string[] = [];
  const recorder = new ToolLessonsCallbackHandler({ ledger, onFailure: () => undefined });
  const lessons = createLessonsGraph({
    tools,
    ledger,
    k: 2,
    autoApply: options.autoApply ?? true,
    memoryEvery: options.memoryEvery ?? 100,
    recorder,
    onError: (message) => errors.push(message),
  });
  const graph = new StateGraph(ToolLessonsAnnotation)
    .addNode("lessons", lessons)
    .addNode("agent", async (state: ToolLessonsState, config: RunnableConfig) => ({
      messages: [await model.bindTools(routedToolsOf(tools, state.routedTools)).invoke(lessonsMessages(state), config)],
    }))
    .addNode("tools", new ToolNode(tools))
    .addEdge(START, "lessons")
    .addEdge("lessons", "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver() });
  const ask = async (user: string, thread: string, text: string) => {
    const state = await graph.invoke(
      { messages: [human(text)] },
      { configurable: { thread_id: thread, user_id: user }, metadata: { user_id: user }, callbacks: [recorder] },
    );
    await recorder.flush();
    return { state, calls: callsOfTurn(state.messages) };
  };
  return { store, ledger, model, errors, ask };
}

describe("the lessons subgraph before an agent node", () => {
  it("a tool failing → a lesson learned → the failure gone, in that partition only", async () => {
    const d = await desk();
    const first = await d.ask("alice", "a-1", "Where is order 482913?");
    expect(first.calls).toEqual([
      { tool: "lookup_order", ok: false },
      { tool: "lookup_order", ok: true },
    ]);
    await d.ask("alice", "a-1", "Where is order 771204?");
    // The third turn: classify sees the last turn's failure, the review finds two refusals.
    const third = await d.ask("alice", "a-1", "Where is order 319870?");
    expect(third.state.lessonsReport.applied).toHaveLength(1);
    expect(third.state.lessonsPrompt).toContain("order_id must look like ORD-######");
    expect(third.calls).toEqual([{ tool: "lookup_order", ok: true }]);
    // A new thread of the same caller starts with the lesson; another caller never sees it.
    expect((await d.ask("alice", "a-2", "Where is order 555555?")).calls).toEqual([{ tool: "lookup_order", ok: true }]);
    const bob = await d.ask("bob", "b-1", "Where is order 555555?");
    expect(bob.calls[0]).toEqual({ tool: "lookup_order", ok: false });
    expect(bob.state.lessonsPrompt).not.toContain("ORD-######");
  });

  it("without autoApply the lesson waits for an operator and the model is not shown it", async () => {
    const d = await desk({ autoApply: false });
    for (const id of ["482913", "771204"]) await d.ask("alice", "a-1", `Where is order ${id}?`);
    const third = await d.ask("alice", "a-1", "Where is order 319870?");
    expect(third.state.lessonsReport.proposed).toHaveLength(1);
    expect(third.state.lessonsReport.applied).toEqual([]);
    expect((await d.ledger.listRevisions("u:alice", { tool: "lookup_order" }))[0].status).toBe("proposed");
    expect(third.calls[0]).toEqual({ tool: "lookup_order", ok: false });
  });

  it("an edict is captured and obeyed in the caller's partition at once", async () => {
    const d = await desk();
    const edict = await d.ask("alice", "a-1", "Never email Sarah.");
    expect(edict.state.lessonsReport.rules).toHaveLength(1);
    expect(edict.state.lessonsPrompt).toContain("[critical] Never email Sarah.");
    const next = await d.ask("alice", "a-1", "Please email Sarah the invoice.");
    expect(next.calls).toEqual([]);
    expect(next.state.messages.at(-1)?.content).toMatch(/rule says never email Sarah/);
    // Another thread of the same caller is bound too; another caller is not.
    expect((await d.ask("alice", "a-9", "Please email Sarah the invoice.")).calls).toEqual([]);
    expect((await d.ask("bob", "b-1", "Please email Sarah the invoice.")).calls).toEqual([
      { tool: "send_email", ok: true },
    ]);
  });

  it("a missed wording is learned and routed right the next time", async () => {
    const d = await desk();
    const first = await d.ask("alice", "m-1", "money back on the kettle please");
    expect(first.state.routedTools).not.toContain("refund_order");
    // Twice, in two threads: a wording routing missed, then the user asks again and refund_order serves it.
    for (const [thread, wording] of [
      ["m-1", ""],
      ["m-2", "money back for my toaster"],
    ]) {
      if (wording !== "") await d.ask("alice", thread, wording);
      await d.ask("alice", thread, "refund order ORD-202020");
      await d.ask("alice", thread, "thanks");
    }
    const revisions = await d.ledger.listRevisions("u:alice", { tool: "refund_order" });
    expect(revisions.map((r) => r.status)).toEqual(["applied"]);
    const after = await d.ask("alice", "m-3", "money back on the blender please");
    expect(after.state.routedTools).toContain("refund_order");
    expect(after.calls).toEqual([{ tool: "refund_order", ok: true }]);
  });

  it("a guideline is shown before the tool is used", async () => {
    const d = await desk({ memoryEvery: 3 });
    for (const id of ["482913", "771204", "319870"]) await d.ask("alice", "g-1", `Where is order ORD-${id}?`);
    d.model.seen.length = 0;
    const turn = await d.ask("alice", "g-1", "Where is order ORD-555555?");
    expect(turn.state.lessonsReport.guidelines).toContain("lookup_order");
    // The first model step of the turn, before any call, was shown the guideline.
    expect(d.model.seen[0].system).toContain("Guideline for lookup_order");
    expect(turn.calls).toEqual([{ tool: "lookup_order", ok: true }]);
  });

  it("a quiet turn reads no records and makes no learning call", async () => {
    const d = await desk();
    await d.ask("alice", "q-1", "Where is order ORD-482913?");
    d.store.searches.clear();
    d.model.seen.length = 0;
    const quiet = await d.ask("alice", "q-1", "Where is order ORD-771204?");
    expect(quiet.state.lessonSignals).toEqual([]);
    for (const collection of ["calls", "turns", "routes"]) expect(d.store.searches.get(collection) ?? 0).toBe(0);
    // Only the agent's own steps: one call, one answer.
    expect(d.model.seen).toHaveLength(2);
  });

  it("the ledger's store failing during a turn: the turn succeeds and the fallback is reported once", async () => {
    const d = await desk();
    await d.ask("alice", "f-1", "Where is order 482913?");
    d.store.failing = true;
    const turn = await d.ask("alice", "f-1", "Where is order ORD-771204?");
    expect(turn.calls).toEqual([{ tool: "lookup_order", ok: true }]);
    expect(turn.state.lessonsReport.ledgerFailed).toBe(true);
    await d.ask("alice", "f-1", "Where is order ORD-771205?");
    expect(d.errors.filter((e) => e.includes("ledger")).length).toBe(1);
  });
});
