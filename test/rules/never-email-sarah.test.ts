/**
 * The "never email Sarah" path end to end in a real LangGraph agent (StateGraph, the prebuilt
 * ToolNode, a scripted chat model): the user says it in a turn that used the email tool; a node
 * after the turn captures it; on the next turn the system prompt the model is given, before any
 * tool is chosen, carries the critical rule; the model obeys it; another caller's prompt does not
 * carry it.
 */
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import {
  Annotation,
  END,
  InMemoryStore,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { LessonManager } from "../../src/learn/manager.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { latestHumanTurn, messageText } from "../../src/caller/request.js";
import { partitionOf } from "../../src/rules/retriever.js";
import { recordEdicts } from "../../src/rules/store.js";
import { ScriptedChatModel, stepOf } from "../helpers/record-agent.js";

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  /** The system prompt of this turn: the pinned rules block. */
  system: Annotation<string>({ reducer: (_old, next) => next, default: () => "" }),
});

/** Who was emailed, by whom: what the email tool actually did. */
const sent: { to: string; user: unknown }[] = [];
const sendEmail = tool(
  async ({ to }, config) => {
    sent.push({ to, user: config?.configurable?.user_id });
    return `sent to ${to}`;
  },
  {
    name: "send_email",
    description: "Send an email to one person.",
    schema: z.object({ to: z.string(), subject: z.string() }),
  },
);
const searchDocs = tool(async () => "found the minutes", {
  name: "search_docs",
  description: "Search the shared documents.",
  schema: z.object({ query: z.string() }),
});
const TOOLS = [sendEmail, searchDocs];
const NAMES = TOOLS.map((t) => t.name);

/**
 * A model that obeys its system prompt: it wants to email whoever the request names, and does,
 * unless the system prompt pins a critical rule for send_email that names that person, in which
 * case it refuses and quotes the rule. What it was shown at each first step is kept.
 */
const firstPrompts: string[] = [];
const model = new ScriptedChatModel((messages: BaseMessage[]) => {
  const system = messages.find((m) => m.getType() === "system");
  const systemText = system ? messageText(system) : "";
  if (stepOf(messages) === 0) firstPrompts.push(systemText);
  if (stepOf(messages) > 0) return new AIMessage("Done.");
  const request = latestHumanTurn(messages)?.text ?? "";
  const to = /\bemail (\w+)/i.exec(request)?.[1] ?? /\bsend (?:it |this )?to (?:the )?(\w+)/i.exec(request)?.[1];
  if (!to) return new AIMessage("Nothing to send.");
  const emailRules = systemText.split("### `send_email`")[1]?.split("\n### ")[0] ?? "";
  const forbidding = emailRules
    .split("\n")
    .find((line) => line.startsWith("- [critical]") && new RegExp(`\\b${to}\\b`, "i").test(line));
  if (forbidding) return new AIMessage(`I won't email ${to}: a pinned rule says "${forbidding.slice(13)}"`);
  return new AIMessage({
    content: "",
    tool_calls: [
      { id: `call_${firstPrompts.length}`, name: "send_email", args: { to, subject: "Update" }, type: "tool_call" },
    ],
  });
});

function buildGraph(manager: LessonManager) {
  return (
    new StateGraph(State)
      // Before the agent: the pinned rules of this caller, as this turn's system prompt (rendered
      // once per thread; the edict captured after turn 1 makes turn 2 render it anew).
      .addNode("rules", async (_state, config) => {
        const threadId = String(config.configurable?.thread_id);
        return { system: (await manager.rulesForPrompt(NAMES, { partition: partitionOf(config), threadId })).text };
      })
      .addNode("agent", async (state, config) => ({
        messages: [await model.invoke([new SystemMessage(state.system), ...state.messages], config)],
      }))
      .addNode("tools", new ToolNode(TOOLS))
      // After the turn: capture what the user told the agent, in their partition.
      .addNode("capture", async (state, config) => {
        const turn = latestHumanTurn(state.messages);
        if (!turn) return {};
        const called = state.messages
          .slice(turn.index + 1)
          .flatMap((m) => (m as AIMessage).tool_calls?.map((c) => c.name) ?? []);
        await recordEdicts(manager.ledger, {
          partition: partitionOf(config),
          text: turn.text,
          tools: NAMES,
          calledTools: called,
        });
        return {};
      })
      .addEdge(START, "rules")
      .addEdge("rules", "agent")
      .addConditionalEdges("agent", toolsCondition, { tools: "tools", [END]: "capture" })
      .addEdge("tools", "agent")
      .addEdge("capture", END)
      .compile({ checkpointer: new MemorySaver() })
  );
}

const as = (user: string, thread: string) => ({ configurable: { thread_id: thread, user_id: user } });

describe('"never email Sarah", end to end in a LangGraph agent', () => {
  it("captures the edict, pins it into the next turn's prompt before any tool is chosen, obeys it, and keeps it from other callers", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const manager = new LessonManager({ ledger, index: new ToolIndex({ ledger }) });
    const graph = buildGraph(manager);

    // Turn 1 (alice): the email tool runs; she says never to email Sarah.
    await graph.invoke(
      { messages: [new HumanMessage("Email Tom the launch notes. Never email Sarah at sarah@example.com.")] },
      as("alice", "alice-1"),
    );
    expect(sent).toEqual([{ to: "Tom", user: "alice" }]);
    expect(firstPrompts[0]).toBe("");
    const [rule] = await manager.listRules({ partition: "u:alice" });
    expect(rule).toMatchObject({
      tool: "send_email",
      rule: "Never email Sarah at <email>.",
      priority: "critical",
      source: "user_explicit",
      scope: "partition",
    });

    // Turn 2 (alice, same thread): the rule is in the system prompt at the first model step.
    const turn2 = await graph.invoke(
      { messages: [new HumanMessage("Email Sarah the minutes from today.")] },
      as("alice", "alice-1"),
    );
    expect(firstPrompts[1]).toContain("## Tool-scoped rules");
    expect(firstPrompts[1]).toContain("### `send_email`\n- [critical] Never email Sarah at <email>.");
    expect(sent).toHaveLength(1);
    const reply = turn2.messages.at(-1) as AIMessage;
    expect(reply.tool_calls ?? []).toEqual([]);
    expect(messageText(reply)).toContain("I won't email Sarah");

    // A new thread of alice's carries it too, byte for byte.
    await graph.invoke({ messages: [new HumanMessage("Email Sarah the budget.")] }, as("alice", "alice-2"));
    expect(firstPrompts[2]).toBe(firstPrompts[1]);
    expect(sent).toHaveLength(1);

    // Bob's prompt does not carry it: his email to Sarah goes out.
    await graph.invoke({ messages: [new HumanMessage("Email Sarah the minutes from today.")] }, as("bob", "bob-1"));
    expect(firstPrompts[3]).toBe("");
    expect(sent).toEqual([
      { to: "Tom", user: "alice" },
      { to: "Sarah", user: "bob" },
    ]);
    expect(await manager.listRules({ partition: "u:bob" })).toEqual([]);
  });
});
