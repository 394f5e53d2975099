import type { Embeddings } from "@langchain/core/embeddings";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import type { RunnableConfig } from "@langchain/core/runnables";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { createToolLessonsAgent } from "../../src/graph/agent.js";
import { createLessonsGraph, lessonsMessages } from "../../src/graph/lessons-graph.js";
import { bindRoutedTools } from "../../src/graph/route-node.js";
import { ToolLessonsAnnotation } from "../../src/graph/state.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { registerTools } from "../../src/learn/register.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { callsOfTurn, DeskModel, deskTools, human } from "./desk.js";

/** A chat model that only counts its calls (the proposer's model: a quiet turn must not call it). */
class CountingModel extends BaseChatModel {
  calls = 0;
  constructor() {
    super({});
  }
  _llmType(): string {
    return "counting";
  }
  override bindTools(): this {
    return this;
  }
  async _generate(_messages: BaseMessage[]): Promise<ChatResult> {
    this.calls += 1;
    return { generations: [{ text: "{}", message: new AIMessage("{}") }] };
  }
}

/** Embeddings that fail like a provider that is down. */
class DownEmbeddings {
  async embedDocuments(texts: string[]): Promise<number[][]> {
    return texts.map(() => [1, 0, 0]);
  }
  async embedQuery(): Promise<number[]> {
    throw new Error("embeddings service 503");
  }
}

const config = (thread: string, user: string) => ({
  configurable: { thread_id: thread, user_id: user },
  metadata: { user_id: user },
});

describe("createReactAgent with the lessons subgraph as its pre-model hook", () => {
  it("learns from a failing tool and obeys an edict, over several turns and threads", async () => {
    const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
    const tools = deskTools();
    await registerTools(ledger, tools, { partition: "u:ann" });
    await ledger.configure("u:ann", { routingK: 2 });
    const model = new DeskModel();
    const recorder = new ToolLessonsCallbackHandler({ ledger, failureSink: () => undefined });
    const lessons = createLessonsGraph({
      tools,
      ledger,
      maxTools: 2,
      autoApply: true,
      recorder,
      failureSink: () => undefined,
    });
    const agent = createReactAgent({
      // The routed tools, each described by its card (what was learned goes into the tool's definition).
      llm: (state) => {
        const { routedTools, routedCards } = state as typeof ToolLessonsAnnotation.State;
        return bindRoutedTools(model, tools, routedTools, routedCards);
      },
      tools,
      stateSchema: ToolLessonsAnnotation,
      preModelHook: (state: typeof ToolLessonsAnnotation.State, config: RunnableConfig) =>
        lessons.invoke(state, config),
      prompt: (state) => lessonsMessages(state as { messages: BaseMessage[]; lessonsPrompt: string }),
      checkpointer: new MemorySaver(),
    });
    const ask = async (thread: string, text: string) => {
      const state = await agent.invoke(
        { messages: [human(text)] },
        { ...config(thread, "ann"), callbacks: [recorder] },
      );
      await recorder.flush();
      return { state, calls: callsOfTurn(state.messages) };
    };
    for (const id of ["482913", "771204"]) {
      expect((await ask("r-1", `Where is order ${id}?`)).calls[0]).toEqual({ tool: "lookup_order", ok: false });
    }
    const third = await ask("r-1", "Where is order 319870?");
    expect(third.calls).toEqual([{ tool: "lookup_order", ok: true }]);
    // The hook ran before every model step, but the lessons nodes once per turn.
    expect(await ledger.listRevisions("u:ann", { tool: "lookup_order" })).toHaveLength(1);

    await ask("r-2", "Never email Sarah.");
    const refused = await ask("r-2", "Please email Sarah the invoice.");
    expect(refused.calls).toEqual([]);
    expect(refused.state.lessonsPrompt).toContain("[critical] Never email Sarah.");
  });
});

describe("createToolLessonsAgent", () => {
  it("is compiled with the app's store when it gives one, and without one when the ledger's store is its own", () => {
    const store = new InMemoryStore();
    const given = createToolLessonsAgent({ model: new DeskModel(), tools: deskTools(), store });
    const own = createToolLessonsAgent({ model: new DeskModel(), tools: deskTools() });
    expect(given.store).toBe(store);
    expect(own.store).toBeUndefined();
    expect(own.ledger.store).toBeInstanceOf(InMemoryStore);
  });

  it("setup() registers the tools, builds the index and reads the lessons for the caller its config names: the first turn writes no card and reads no lesson", async () => {
    const store = new InMemoryStore();
    const graph = createToolLessonsAgent({ model: new DeskModel(), tools: deskTools(), store, maxTools: 2 });
    expect(await graph.setup({ configurable: { user_id: "wu" } })).toEqual({ partition: "u:wu" });
    expect((await graph.ledger.listCards("u:wu")).map((c) => c.name).sort()).toEqual(
      deskTools()
        .map((t) => t.name)
        .sort(),
    );
    let cardWrites = 0;
    let lessonReads = 0;
    const batch = store.batch.bind(store);
    store.batch = (async (ops: Parameters<typeof batch>[0]) => {
      for (const op of ops) {
        const ns = "namespace" in op ? op.namespace : "namespacePrefix" in op ? op.namespacePrefix : [];
        const lessons = ["cards", "rules", "settings", "guidelines"].includes(String(ns[2]));
        if (lessons && "value" in op) cardWrites += 1;
        else if (lessons) lessonReads += 1;
      }
      return batch(ops);
    }) as unknown as typeof store.batch;
    const state = await graph.invoke({ messages: [human("Where is order ORD-482913?")] }, config("w-1", "wu"));
    expect(cardWrites).toBe(0);
    expect(lessonReads).toBe(0);
    expect(state.routedTools).toContain("lookup_order");
  });

  it("hands its one sink to its ledger and its recorder: a damaged row and withheld records are heard there", async () => {
    const store = new InMemoryStore();
    const heard: ToolLessonsFailure[] = [];
    const graph = createToolLessonsAgent({
      model: new DeskModel(),
      tools: deskTools(),
      store,
      failureSink: (f) => heard.push(f),
    });
    await store.put(["tool-lessons", "p", "cards"], "broken", { name: 42 });
    expect(await graph.ledger.listCards("p")).toEqual([]);
    // The store refuses the run's records: the recorder keeps them, and says so to the same sink.
    const batch = store.batch.bind(store);
    store.batch = (async (ops: Parameters<typeof batch>[0]) => {
      if (ops.some((op) => "value" in op && ["calls", "turns"].includes(String(op.namespace[2]))))
        throw new Error("disk full");
      return batch(ops);
    }) as unknown as typeof store.batch;
    await graph.invoke({ messages: [human("Where is order ORD-482913?")] }, config("s-1", "sy"));
    for (let i = 0; i < 100 && !heard.some((f) => f.stage === "record"); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(heard.map((f) => f.stage)).toEqual(expect.arrayContaining(["ledger", "record"]));
  });

  it("is agent (lessons served in its step) → tools with the recorder wired: records land, lessons apply", async () => {
    const store = new InMemoryStore();
    const tools = deskTools();
    const graph = createToolLessonsAgent({
      model: new DeskModel(),
      tools,
      store,
      checkpointer: new MemorySaver(),
      maxTools: 2,
      autoApply: true,
      failureSink: () => undefined,
    });
    const ask = async (text: string) => {
      const state = await graph.invoke({ messages: [human(text)] }, config("c-1", "cy"));
      await graph.recorder.flush();
      return callsOfTurn(state.messages);
    };
    await ask("Where is order 482913?");
    await ask("Where is order 771204?");
    // Cards were registered in the caller's partition on first sight; the recorder wrote there too.
    expect((await graph.ledger.listCalls("u:cy")).length).toBe(4);
    expect(await ask("Where is order 319870?")).toEqual([{ tool: "lookup_order", ok: true }]);
    // Through the graph's store: the nodes read the same ledger the recorder writes.
    expect((await new Ledger(store).listRevisions("u:cy"))[0].status).toBe("applied");
  });

  it("puts the app's own system prompt first and the lessons block after it, in one system message", async () => {
    const model = new DeskModel();
    const graph = createToolLessonsAgent({
      model,
      tools: deskTools(),
      maxTools: 2,
      checkpointer: new MemorySaver(),
      systemPrompt: "You are the Acme support desk.",
      failureSink: () => undefined,
    });
    await graph.invoke({ messages: [human("What can you do?")] }, config("sp-1", "sy"));
    // No lessons yet: the app's prompt alone.
    expect(model.seen.at(-1)?.system).toBe("You are the Acme support desk.");
    await graph.invoke({ messages: [human("Never email Sarah.")] }, config("sp-1", "sy"));
    const state = await graph.invoke({ messages: [human("Please email Sarah the invoice.")] }, config("sp-1", "sy"));
    const system = model.seen.at(-1)?.system ?? "";
    expect(system.startsWith("You are the Acme support desk.\n\n## Tool-scoped rules")).toBe(true);
    expect(system).toContain("[critical] Never email Sarah.");
    expect(callsOfTurn(state.messages)).toEqual([]);
    // The block is the model's only: the thread holds no system message.
    expect(state.messages.some((m) => m.getType() === "system")).toBe(false);
  });

  it("a quiet turn makes no call to the proposer's model; a turn with signals does", async () => {
    const proposer = new CountingModel();
    const graph = createToolLessonsAgent({
      model: new DeskModel(),
      tools: deskTools(),
      maxTools: 2,
      checkpointer: new MemorySaver(),
    });
    const withProposer = createToolLessonsAgent({
      model: new DeskModel(),
      tools: deskTools(),
      maxTools: 2,
      checkpointer: new MemorySaver(),
      proposerModel: proposer,
      failureSink: () => undefined,
    });
    const run = async (text: string) => {
      await withProposer.invoke({ messages: [human(text)] }, config("p-1", "pat"));
      await withProposer.recorder.flush();
    };
    await run("Where is order ORD-482913?");
    await run("Where is order ORD-771204?");
    expect(proposer.calls).toBe(0);
    for (const id of ["111111", "222222", "333333"]) await run(`Where is order ${id}?`);
    expect(proposer.calls).toBeGreaterThan(0);
  });
});

describe("a quiet turn costs no graph step of its own", () => {
  /** The graph steps of one turn, as stream mode "updates" tells them (subgraphs included): node name → its update. */
  async function steps(graph: ReturnType<typeof createToolLessonsAgent>, text: string, thread: string) {
    const out: { node: string; update: Record<string, unknown> }[] = [];
    const stream = await graph.stream(
      { messages: [human(text)] },
      { ...config(thread, "sam"), streamMode: "updates", subgraphs: true },
    );
    for await (const [, chunk] of stream as AsyncIterable<[string[], Record<string, Record<string, unknown>>]>) {
      for (const [node, update] of Object.entries(chunk)) out.push({ node, update: update ?? {} });
    }
    await graph.recorder.flush();
    return out;
  }

  it("quiet: the agent's own steps only, the lessons fields written in the first; with evidence: learn runs in that step too", async () => {
    const graph = createToolLessonsAgent({
      model: new DeskModel(),
      tools: deskTools(),
      maxTools: 2,
      autoApply: true,
      checkpointer: new MemorySaver(),
    });
    const quiet = await steps(graph, "Where is order ORD-482913?", "o-1");
    // The same steps as an agent without lessons: agent → tools → agent.
    expect(quiet.map((s) => s.node)).toEqual(["agent", "tools", "agent"]);
    // A new thread's quiet turn writes the routed tools and the turn's id beside the model's message; nothing else.
    expect(Object.keys(quiet[0].update).sort()).toEqual(["lessonsTurn", "messages", "routedTools"]);
    expect(quiet[0].update.routedTools).toHaveLength(2);
    // The model step after the tool call is the same turn: no lessons field is written again.
    expect(Object.keys(quiet[2].update)).toEqual(["messages"]);
    // Refused calls in single-turn threads: the turn after the evidence reaches the rule learns, still in the agent's step.
    const reports: unknown[] = [];
    for (const [i, id] of ["111111", "222222", "333333"].entries()) {
      const turn = await steps(graph, `Where is order ${id}?`, `o-${i + 2}`);
      expect(turn.filter((s) => !["agent", "tools"].includes(s.node)).map((s) => s.node)).toEqual([]);
      reports.push(turn[0].update.lessonsReport);
    }
    expect(reports.some((r) => ((r as { applied?: string[] } | undefined)?.applied ?? []).length > 0)).toBe(true);
  });

  it("the subgraph form shows its stages as nodes of their own: classify → inject on a quiet turn", async () => {
    const graph = createToolLessonsAgent({
      model: new DeskModel(),
      tools: deskTools(),
      maxTools: 2,
      subgraph: true,
      checkpointer: new MemorySaver(),
    });
    const quiet = await steps(graph, "Where is order ORD-482913?", "s-1");
    expect(quiet.map((s) => s.node)).toEqual(["classify", "inject", "lessons", "agent", "tools", "agent"]);
  });
});

describe("degrading", () => {
  it("embeddings throwing during a turn: every tool is offered, the turn succeeds, the fallback is reported once and recorded", async () => {
    const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
    const tools = deskTools();
    await registerTools(ledger, tools, { partition: "u:dee" });
    const errors: string[] = [];
    const index = new ToolIndex({ ledger, embeddings: new DownEmbeddings() as unknown as Embeddings });
    const graph = createToolLessonsAgent({
      model: new DeskModel(),
      tools,
      store: ledger.store,
      index,
      checkpointer: new MemorySaver(),
      failureSink: (failure) => errors.push(failure.message),
    });
    // The index given writes to the graph's store: the nodes route with it.
    const state = await graph.invoke({ messages: [human("Where is order ORD-482913?")] }, config("d-1", "dee"));
    await graph.invoke({ messages: [human("Where is order ORD-482914?")] }, config("d-1", "dee"));
    await graph.recorder.flush();
    expect(callsOfTurn(state.messages)).toEqual([{ tool: "lookup_order", ok: true }]);
    expect(state.lessonsReport.routing).toBe("all_tools");
    expect(state.routedTools).toEqual(tools.map((t) => t.name));
    expect(errors.filter((e) => e.startsWith("routing failed"))).toHaveLength(1);
    const routes = await graph.ledger.listRoutes("u:dee");
    expect(routes.map((r) => ({ allSent: r.allSent, offered: r.offered }))).toEqual([
      { allSent: true, offered: [] },
      { allSent: true, offered: [] },
    ]);
  });
});
