import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { END, InMemoryStore, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { classifyTurn } from "../../src/graph/classify.js";
import { createLessonsNode, createLessonsNodes, lessonsMessages } from "../../src/graph/lessons-graph.js";
import { ToolLessonsZodState } from "../../src/graph/state.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { registerTools } from "../../src/learn/register.js";
import { putRule } from "../../src/rules/store.js";
import { deskTools } from "./desk.js";

const TOOLS = deskTools().map((t) => t.name);

function ran(id: string, tool: string, ok: boolean) {
  return [
    new AIMessage({ content: "", tool_calls: [{ id, name: tool, args: {}, type: "tool_call" }] }),
    new ToolMessage({ content: ok ? "ok" : "Error", tool_call_id: id, name: tool, status: ok ? "success" : "error" }),
  ];
}

describe("classifyTurn", () => {
  it("a first turn with no edict is quiet", () => {
    expect(
      classifyTurn({ messages: [new HumanMessage("hello")], tools: TOOLS, callsSince: 0, memoryEvery: 10 }),
    ).toEqual({ signals: [], callsSince: 0 });
  });

  it("finds an edict in the new turn; failures, misses and confusions come from the partition's tally, not the thread", () => {
    const messages = [
      new HumanMessage("where is my parcel"),
      ...ran("1", "track_parcel", true),
      new AIMessage("in transit"),
      new HumanMessage("I mean order ORD-123456"),
      ...ran("2", "lookup_order", false),
      ...ran("3", "lookup_order", true),
      new AIMessage("shipped"),
      new HumanMessage("Never email Sarah."),
    ];
    // One thread's failure, miss and confusion are one each: below every rule, so no review.
    expect(classifyTurn({ messages, tools: TOOLS, callsSince: 0, memoryEvery: 10 }).signals).toEqual([
      { kind: "edict", tools: [] },
    ]);
    const due = [
      { tool: "lookup_order", kinds: ["failure", "miss"] as const },
      { tool: "track_parcel", kinds: ["confusion"] as const },
    ].map((d) => ({ tool: d.tool, kinds: [...d.kinds] }));
    const { signals } = classifyTurn({
      messages: [new HumanMessage("hello")],
      tools: TOOLS,
      callsSince: 0,
      memoryEvery: 10,
      due,
    });
    expect(signals).toEqual([
      { kind: "failure", tools: ["lookup_order"] },
      { kind: "miss", tools: ["lookup_order"] },
      { kind: "confusion", tools: ["track_parcel"] },
    ]);
  });

  it("asks for a memory pass every `memoryEvery` calls", () => {
    const messages = [new HumanMessage("a"), ...ran("1", "lookup_order", true), new HumanMessage("b")];
    expect(classifyTurn({ messages, tools: TOOLS, callsSince: 1, memoryEvery: 3 })).toEqual({
      signals: [],
      callsSince: 2,
    });
    expect(classifyTurn({ messages, tools: TOOLS, callsSince: 2, memoryEvery: 3 })).toEqual({
      signals: [{ kind: "memory", tools: ["lookup_order"] }],
      callsSince: 0,
    });
  });
});

describe("the inject node", () => {
  it("is byte-stable: the same ledger and turn give the same block, in any thread", async () => {
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, deskTools(), { partition: "u:a" });
    await putRule(
      ledger,
      { tool: "send_email", rule: "Never email Sarah.", priority: "critical", source: "user_explicit" },
      { partition: "u:a" },
    );
    await putRule(
      ledger,
      { tool: "send_email", rule: "Keep emails short.", priority: "normal", source: "programmatic" },
      { partition: "u:a" },
    );
    const prompts: string[] = [];
    for (const thread of ["t-1", "t-2", "t-1"]) {
      const { inject } = createLessonsNodes({ tools: deskTools(), ledger, maxTools: 2 });
      const update = await inject(
        { messages: [new HumanMessage("please email the customer about the delay")] },
        { configurable: { thread_id: thread, user_id: "a" } },
      );
      prompts.push((update as { lessonsPrompt: string }).lessonsPrompt);
    }
    expect(prompts[0]).toContain("[critical] Never email Sarah.");
    expect(prompts[0]).toContain("`send_email`: Keep emails short.");
    expect(new Set(prompts).size).toBe(1);
  });

  it("runs once per turn: a second model step of the same turn changes nothing", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const { inject } = createLessonsNodes({ tools: deskTools(), ledger, maxTools: 2 });
    const messages = [new HumanMessage({ content: "where is order ORD-123456", id: "m-1" })];
    const config = { configurable: { thread_id: "t", user_id: "a" } };
    const first = (await inject({ messages }, config)) as { lessonsTurn: string };
    expect(first.lessonsTurn).toBe("m-1");
    expect(await inject({ messages, lessonsTurn: "m-1" }, config)).toEqual({});
    expect(await ledger.listRoutes("u:a")).toHaveLength(1);
  });
});

describe("the learn node", () => {
  it("scopes an edict that names no tool to the first tool the thread's last turn ran", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const { learn } = createLessonsNodes({ tools: deskTools(), ledger });
    const messages = [
      new HumanMessage("where is my parcel"),
      ...ran("1", "track_parcel", true),
      new AIMessage("in transit"),
      new HumanMessage("Never do that again."),
    ];
    await learn(
      { messages, lessonSignals: [{ kind: "edict", tools: [] }] },
      { configurable: { thread_id: "v", user_id: "v" } },
    );
    const rules = await ledger.listRules("u:v");
    expect(rules.map((r) => [r.tool, r.priority])).toEqual([["track_parcel", "critical"]]);
  });
});

describe("the zod state form", () => {
  it("carries the lessons fields through a zod-declared graph with a checkpointer", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const seen: number[] = [];
    const graph = new StateGraph(ToolLessonsZodState)
      .addNode("lessons", createLessonsNode({ tools: deskTools(), ledger, maxTools: 2 }))
      .addNode("agent", async (state) => {
        seen.push(lessonsMessages(state).length);
        return { messages: [new AIMessage("ok")] };
      })
      .addEdge(START, "lessons")
      .addEdge("lessons", "agent")
      .addEdge("agent", END)
      .compile({ checkpointer: new MemorySaver() });
    await putRule(
      ledger,
      { tool: "send_email", rule: "Never email Sarah.", priority: "critical", source: "user_explicit" },
      { partition: "u:z" },
    );
    const config = { configurable: { thread_id: "z-1", user_id: "z" } };
    const state = await graph.invoke({ messages: [new HumanMessage("email the customer")] }, config);
    expect(state.lessonsPrompt).toContain("[critical] Never email Sarah.");
    expect(state.routedTools).toHaveLength(2);
    const again = await graph.invoke({ messages: [new HumanMessage("and track the parcel")] }, config);
    expect(again.lessonsTurn).not.toBe(state.lessonsTurn);
    // The system message is added for the model only (when there is a block): the thread holds human and AI messages alone.
    expect(seen).toEqual([2, again.lessonsPrompt === "" ? 3 : 4]);
    expect(again.messages.map((m) => m.getType())).toEqual(["human", "ai", "human", "ai"]);
  });
});
