import type { RunnableConfig } from "@langchain/core/runnables";
import { BaseStore, END, InMemoryStore, MemorySaver, type Operation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { createLessonsGraph, lessonsMessages } from "../../src/graph/lessons-graph.js";
import { bindRoutedTools } from "../../src/graph/route-node.js";
import { ToolLessonsAnnotation, type ToolLessonsState } from "../../src/graph/state.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { registerTools } from "../../src/learn/register.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { ToolMessage } from "@langchain/core/messages";
import { createToolLessonsAgent } from "../../src/graph/agent.js";
import { LessonManager } from "../../src/learn/manager.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { BookingModel, bookingTools } from "./booking.js";
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

async function desk(options: { autoApply?: boolean; memoryEvery?: number; wordings?: false } = {}) {
  const store = new WatchedStore();
  const ledger = new Ledger(store, { failureSink: () => undefined });
  const tools = deskTools();
  for (const partition of ["u:alice", "u:bob"]) {
    await registerTools(ledger, tools, { partition });
    await ledger.configure(partition, { routingK: 2, minEvaluatedCalls: 1, memoryRecent: 5 });
  }
  const model = new DeskModel();
  const errors: string[] = [];
  const recorder = new ToolLessonsCallbackHandler({ ledger, failureSink: () => undefined });
  const lessons = createLessonsGraph({
    tools,
    ledger,
    maxTools: 2,
    autoApply: options.autoApply ?? true,
    memoryEvery: options.memoryEvery ?? 100,
    ...(options.wordings === false ? { index: new ToolIndex({ ledger, wordings: false }) } : {}),
    recorder,
    failureSink: (failure) => errors.push(failure.kind),
  });
  const graph = new StateGraph(ToolLessonsAnnotation)
    .addNode("lessons", lessons)
    .addNode("agent", async (state: ToolLessonsState, config: RunnableConfig) => ({
      messages: [
        await bindRoutedTools(model, tools, state.routedTools, state.routedCards).invoke(
          lessonsMessages(state),
          config,
        ),
      ],
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
  const index = () => new ToolIndex({ ledger, ...(options.wordings === false ? { wordings: false as const } : {}) });
  return { store, ledger, model, errors, ask, index };
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
    // What was learned goes into the tool's own definition, not the system block.
    expect(d.model.seen.at(-1)?.descriptions.lookup_order).toContain("order_id must look like ORD-######");
    expect(third.state.lessonsPrompt).not.toContain("ORD-######");
    expect(third.calls).toEqual([{ tool: "lookup_order", ok: true }]);
    // A new thread of the same caller starts with the lesson; another caller never sees it.
    expect((await d.ask("alice", "a-2", "Where is order 555555?")).calls).toEqual([{ tool: "lookup_order", ok: true }]);
    const bob = await d.ask("bob", "b-1", "Where is order 555555?");
    expect(bob.calls[0]).toEqual({ tool: "lookup_order", ok: false });
    expect(d.model.seen.at(-1)?.descriptions.lookup_order).not.toContain("ORD-######");
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
    // Routing from the cards alone, so the miss is learned as an example (with wordings on, the served
    // request itself may route its next paraphrase right, and nothing is missed twice).
    const d = await desk({ wordings: false });
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
    // Each kind of failure is heard once, however many turns it degrades.
    expect(d.errors.length).toBeGreaterThan(0);
    expect(new Set(d.errors).size).toBe(d.errors.length);
  });
});

describe("learning from the partition's evidence, every thread's", () => {
  it("single-turn threads failing the same way: under autoApply a later turn's model is shown the note", async () => {
    const d = await desk();
    const firstTry: boolean[] = [];
    for (let i = 0; i < 6; i++) {
      // A stateless app: every request its own thread, one turn each.
      const turn = await d.ask("alice", `s-${i}`, `Where is order ${482910 + i}?`);
      firstTry.push(turn.calls[0].ok);
    }
    // Two refusals in two threads reach minFailures: the third request's turn learns, applies and shows the note.
    expect(firstTry).toEqual([false, false, true, true, true, true]);
    const [revision] = await d.ledger.listRevisions("u:alice", { tool: "lookup_order" });
    expect(revision.status).toBe("applied");
    // What was learned reaches the model in the tool's own definition.
    const shown = d.model.seen.filter((s) => /where is order/i.test(s.request));
    expect(shown.some((s) => (s.descriptions.lookup_order ?? "").includes("order_id must look like ORD-######"))).toBe(
      true,
    );
    // The other caller learned nothing from it.
    expect(await d.ledger.listRevisions("u:bob")).toEqual([]);
  });

  it("after a first lesson was applied, misses spread over four threads: the graph proposes a second, and reports only what it stored", async () => {
    // Wordings off: the subject is the second lesson learned across threads (the wordings of the
    // requests lookup_order served would route the next receipt request to it before any review).
    const d = await desk({ autoApply: false, wordings: false });
    for (const id of ["482913", "771204"]) await d.ask("alice", `f-${id}`, `Where is order ${id}?`);
    const first = await d.ask("alice", "f-3", "Where is order 319870?");
    expect(first.state.lessonsReport.proposed).toHaveLength(1);
    const manager = new LessonManager({ ledger: d.ledger, index: d.index() });
    await manager.apply(first.state.lessonsReport.proposed[0], { partition: "u:alice", approvedBy: "op" });
    // Four threads: a first wording routing missed, then the request lookup_order served.
    const reports: string[][] = [];
    for (const [i, item] of ["kettle", "blender", "toaster", "mixer"].entries()) {
      const missed = await d.ask("alice", `m-${i}`, `receipt for my ${item} purchase please`);
      expect(missed.state.routedTools).not.toContain("lookup_order");
      reports.push(missed.state.lessonsReport.proposed);
      reports.push((await d.ask("alice", `m-${i}`, `Where is order ORD-10000${i}?`)).state.lessonsReport.proposed);
    }
    const revisions = await d.ledger.listRevisions("u:alice", { tool: "lookup_order" });
    expect(revisions.map((r) => r.status)).toEqual(["proposed", "applied"]);
    expect(revisions[0].queriesAdded.join(" ")).toMatch(/receipt for my \w+ purchase please/);
    expect(revisions[0].evidence.every((e) => e.kind === "missed_request" && e.how === "re_asked")).toBe(true);
    // Proposed once, on the turn after the second miss; every id a report lists was stored.
    expect(reports.flat()).toEqual([revisions[0].id]);
  });

  for (const subgraph of [false, true]) {
    it(`one tool, three lessons in a row under autoApply (createToolLessonsAgent, ${subgraph ? "subgraph" : "one node"})`, async () => {
      const model = new BookingModel();
      const errors: string[] = [];
      const agent = createToolLessonsAgent({
        model,
        tools: bookingTools(),
        store: new InMemoryStore(),
        checkpointer: new MemorySaver(),
        autoApply: true,
        subgraph,
        failureSink: (failure) => errors.push(failure.message),
      });
      const refused: number[] = [];
      const applied: number[] = [];
      for (let i = 0; i < 8; i++) {
        const state = await agent.invoke(
          { messages: [human("Book a room for the team sync")] },
          { configurable: { thread_id: `b-${i}`, user_id: "ann" } },
        );
        await agent.recorder.flush();
        refused.push(state.messages.filter((m) => m instanceof ToolMessage && m.status === "error").length);
        applied.push(state.lessonsReport.applied.length);
      }
      // Each argument's format is refused twice, then learned, applied and followed from that turn on.
      expect(refused).toEqual([1, 1, 1, 1, 1, 1, 0, 0]);
      expect(applied).toEqual([0, 0, 1, 0, 1, 0, 1, 0]);
      const revisions = await agent.ledger.listRevisions("u:ann", { tool: "book_room" });
      expect(revisions.map((r) => [r.status, r.notesAdded])).toEqual([
        ["applied", ["room must look like RM-###; calls with ### were refused (validation)."]],
        ["applied", ["time must look like ##:##; calls with ### were refused (validation)."]],
        ["applied", ["date must look like ####-##-##; calls with ##/##/#### were refused (validation)."]],
      ]);
      expect(model.shown.at(-1)).toContain("room must look like RM-###");
      expect(model.shown.at(-1)).toContain("date must look like ####-##-##");
      expect(errors).toEqual([]);
    });
  }
});
