import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { END, InMemoryStore, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { lessonsMessages } from "../../src/graph/lessons-graph.js";
import { ToolLessonsAnnotation, type ToolLessonsState, ToolLessonsZodState } from "../../src/graph/state.js";
import { withLessons } from "../../src/graph/with-lessons.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { putRule } from "../../src/rules/store.js";
import { deskTools } from "./desk.js";

/** The node names of one run, in order, as stream mode "updates" tells them. */
async function nodesOf(
  graph: { stream: (input: unknown, config: unknown) => Promise<AsyncIterable<Record<string, unknown>>> },
  text: string,
  thread: string,
): Promise<string[]> {
  const out: string[] = [];
  const stream = await graph.stream(
    { messages: [new HumanMessage(text)] },
    { configurable: { thread_id: thread, user_id: "w" }, streamMode: "updates" },
  );
  for await (const chunk of stream) out.push(...Object.keys(chunk));
  return out;
}

describe("withLessons: the lessons stages served in the agent node's own step", () => {
  it("adds no step to a graph of one's own, and the agent sees this turn's routed tools and block", async () => {
    const ledger = new Ledger(new InMemoryStore());
    await putRule(
      ledger,
      { tool: "send_email", rule: "Never email Sarah.", priority: "critical", source: "user_explicit" },
      { partition: "u:w" },
    );
    const seen: { prompt: string; routed: string[]; turn: string | undefined }[] = [];
    const agent = async (state: ToolLessonsState) => {
      seen.push({ prompt: state.lessonsPrompt, routed: state.routedTools, turn: state.lessonsTurn });
      return { messages: [new AIMessage("ok")] };
    };
    const build = (node: typeof agent | ReturnType<typeof withLessons<ToolLessonsState, { messages: AIMessage[] }>>) =>
      new StateGraph(ToolLessonsAnnotation)
        .addNode("agent", node)
        .addEdge(START, "agent")
        .addEdge("agent", END)
        .compile({ checkpointer: new MemorySaver() });
    const plain = build(agent);
    const wrapped = build(withLessons(agent, { tools: deskTools(), ledger, maxTools: 2 }));
    const plainNodes = await nodesOf(plain as never, "email the customer", "p-1");
    seen.length = 0;
    const lessonNodes = await nodesOf(wrapped as never, "email the customer", "w-1");
    expect(lessonNodes).toEqual(plainNodes);
    expect(lessonNodes).toEqual(["agent"]);
    // What the agent node was called with: the fields the lessons stages served in the same step.
    expect(seen).toHaveLength(1);
    expect(seen[0].prompt).toContain("[critical] Never email Sarah.");
    expect(seen[0].routed).toHaveLength(2);
    expect(seen[0].turn).toMatch(/.+/);
    const state = await wrapped.getState({ configurable: { thread_id: "w-1" } });
    expect(state.values.lessonsTurn).toBe(seen[0].turn);
    expect(state.values.routedTools).toEqual(seen[0].routed);
  });

  it("serves once per user turn: a later model step of the same turn calls the agent with the state as it is", async () => {
    const ledger = new Ledger(new InMemoryStore());
    let served = 0;
    const lessonsTurns: (string | undefined)[] = [];
    const inner = async (state: ToolLessonsState) => {
      lessonsTurns.push(state.lessonsTurn);
      return { messages: [new AIMessage(`step ${lessonsTurns.length}`)] };
    };
    const node = withLessons(inner, {
      tools: deskTools(),
      ledger,
      maxTools: 2,
      failureSink: () => undefined,
    });
    const counted = async (state: ToolLessonsState, config: Parameters<typeof node>[1]) => {
      const update = await node(state, config);
      if ("lessonsTurn" in update) served += 1;
      return update;
    };
    // Two model steps in one turn (the agent node loops once), as a tool loop would make.
    const graph = new StateGraph(ToolLessonsAnnotation)
      .addNode("agent", counted)
      .addEdge(START, "agent")
      .addConditionalEdges("agent", (s: ToolLessonsState) => (s.messages.length < 3 ? "agent" : END), ["agent", END])
      .compile({ checkpointer: new MemorySaver() });
    await graph.invoke({ messages: [new HumanMessage("where is my parcel")] }, { configurable: { thread_id: "t" } });
    expect(lessonsTurns).toHaveLength(2);
    expect(served).toBe(1);
    expect(lessonsTurns[1]).toBe(lessonsTurns[0]);
  });

  it("works over the zod state form too", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const graph = new StateGraph(ToolLessonsZodState)
      .addNode(
        "agent",
        withLessons(
          async (state: { messages: ToolLessonsState["messages"]; lessonsPrompt?: string }) => ({
            messages: [new AIMessage(`saw ${lessonsMessages(state).length}`)],
          }),
          { tools: deskTools(), ledger, maxTools: 2 },
        ),
      )
      .addEdge(START, "agent")
      .addEdge("agent", END)
      .compile({ checkpointer: new MemorySaver() });
    const state = await graph.invoke(
      { messages: [new HumanMessage("track the parcel")] },
      { configurable: { thread_id: "z", user_id: "z" } },
    );
    expect(state.routedTools).toHaveLength(2);
    expect(state.messages.map((m) => m.getType())).toEqual(["human", "ai"]);
  });
});
