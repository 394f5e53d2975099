import { type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Annotation, END, InMemoryStore, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { LessonManager } from "../../src/learn/manager.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { ModelEvaluator } from "../../src/memory/model-evaluator.js";
import { ModelSynthesizer } from "../../src/memory/model-synthesizer.js";
import { planScript, ScriptedChatModel } from "../helpers/record-agent.js";
import { ScriptedReplyModel } from "./memory-fixtures.js";

/**
 * End to end: a real LangGraph agent (the prebuilt ToolNode, a scripted model) whose search tool
 * succeeds but finds nothing for vague requests. The recorder keeps each call with its masked
 * output; after enough calls the manager's summary says so, with the statistics block, and the
 * next turn's prompt, built from the manager's memory by a small node before the agent, carries it.
 */

const VAGUE = new Set(["stuff", "something", "things", "anything", "whatever", "info", "docs", "help"]);

const searchDocs = tool(
  async ({ query }) => {
    const words = query.toLowerCase().split(/\s+/);
    if (words.every((w) => VAGUE.has(w) || w.length <= 3)) return "No results found.";
    return `Found 3 pages about ${query}: overview, setup, reference.`;
  },
  {
    name: "search_docs",
    description: "Search the product documentation for a topic. Returns the matching pages.",
    schema: z.object({ query: z.string().describe("What to look for") }),
  },
);

/** User turns and the query the model searches for; the vague ones have no topic to find. */
const VAGUE_TURNS: [string, string][] = [
  ["can you find stuff for me", "stuff"],
  ["I need something on this", "something"],
  ["look up things please", "things"],
  ["any info at all?", "info"],
  ["show me the docs", "docs"],
  ["help me out here", "help"],
  ["what do you have on that", "whatever"],
  ["search whatever you can", "anything"],
];
const SPECIFIC_TURNS: [string, string][] = [
  ["how do I configure single sign-on", "single sign-on configuration"],
  ["what is the webhook retry policy", "webhook retry policy"],
  ["export billing for Margaret Whitfield", "billing export Margaret Whitfield"],
  ["what are the rate limits of the public api", "public api rate limits"],
];
const QUERY = new Map([...VAGUE_TURNS, ...SPECIFIC_TURNS, ["is there anything at all", "anything"]]);

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  /** The system prompt of this turn, built from tool memory. */
  system: Annotation<string>(),
});

function agent(manager: LessonManager, seen: BaseMessage[][]) {
  const model = new ScriptedChatModel((messages) => {
    seen.push(messages);
    const request = [...messages].reverse().find((m) => m.getType() === "human")?.text ?? "";
    const query = QUERY.get(request) ?? request;
    return planScript((step) => (step === 0 ? [{ name: "search_docs", args: { query } }] : undefined), {
      final: "Here is what I found.",
    })(messages);
  });
  return (
    new StateGraph(State)
      // The later inject node's job, done small: the routed tools' guidelines as the system prompt.
      .addNode("prompt", async () => ({ system: await manager.memoryBlock(["search_docs"]) }))
      .addNode("agent", async (state, config) => ({
        messages: [
          await model.invoke(
            state.system ? [new SystemMessage(state.system), ...state.messages] : state.messages,
            config,
          ),
        ],
      }))
      .addNode("tools", new ToolNode([searchDocs]))
      .addEdge(START, "prompt")
      .addEdge("prompt", "agent")
      .addConditionalEdges("agent", toolsCondition, ["tools", END])
      .addEdge("tools", "agent")
      .compile()
  );
}

describe("tool memory end to end, on a real LangGraph agent", () => {
  it("after enough calls the guideline says vague requests return nothing, and the next prompt carries it", async () => {
    const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
    await registerTools(ledger, [searchDocs]);
    const manager = new LessonManager({ ledger, index: new ToolIndex({ ledger }) });
    const recorder = new ToolLessonsCallbackHandler({
      ledger,
      singleTenant: true,
      failureSink: (f) => expect.fail(f.message),
    });
    const seen: BaseMessage[][] = [];
    const graph = agent(manager, seen);
    const turn = async (text: string, i: number) => {
      await graph.invoke(
        { messages: [new HumanMessage(text)] },
        { configurable: { thread_id: `t-${i}` }, callbacks: [recorder] },
      );
      await recorder.flush();
    };

    const turns = [...VAGUE_TURNS.slice(0, 3), ...SPECIFIC_TURNS, ...VAGUE_TURNS.slice(3)];
    for (const [i, [text]] of turns.entries()) await turn(text, i);
    // No memory yet: the agent ran without a system prompt.
    expect(seen.every((messages) => messages[0].getType() !== "system")).toBe(true);

    const calls = await ledger.listCalls("default", { tool: "search_docs" });
    expect(calls).toHaveLength(12);
    expect(calls.every((c) => c.outcome === "success")).toBe(true);

    // Not enough data until minEvaluatedCalls (10) calls are evaluated.
    const early = await manager.summarize(["search_docs"], { config: { minEvaluatedCalls: 13 } });
    expect(early.tools[0].status).toBe("not_enough_data");

    const summary = await manager.summarize(["search_docs"]);
    expect(summary.tools[0].status).toBe("summarized");
    const memory = await manager.memoryFor("search_docs");
    expect(memory.guideline?.commonIssues[0]).toBe(
      "Succeeded but returned no results in 8 of 12 recent calls: the request matched nothing, often because it was vague or too broad.",
    );
    expect(memory.guideline?.bestPractices[0]).toMatch(/^Make the request specific/);
    // The vet kept every line (a common word used as an argument value, e.g. "it", would block that word).
    expect(memory.guideline?.refused).toEqual([]);
    expect(memory.stats).toMatchObject({ totalCalls: 12, successRate: 1, avgScore: 0.6667 });
    expect(memory.text).toContain("What it is for: Search the product documentation for a topic.");
    expect(memory.text).toContain(
      "Statistics:\n- calls: 12 evaluated, 12 recent\n- success rate: 100% overall, 100% recent",
    );
    expect(memory.text).toContain("- average score (0 to 1): 0.67 overall, 0.67 recent");

    // The next turn's prompt carries the guideline and its statistics.
    const before = seen.length;
    await turn("is there anything at all", 99);
    const prompt = seen[before][0];
    expect(prompt.getType()).toBe("system");
    expect(prompt.text).toContain("Guideline for search_docs");
    expect(prompt.text).toContain("returned no results in 8 of 12 recent calls");
    expect(prompt.text).toContain("Statistics:");
    expect(prompt.text).toBe(await manager.memoryBlock(["search_docs"]));

    // Nothing of an argument value reached the window, the guideline or the prompt.
    const window = await ledger.listEvaluatedCalls("default", "search_docs");
    for (const text of [JSON.stringify(window), JSON.stringify(memory.guideline), prompt.text]) {
      expect(text).not.toMatch(/Margaret|Whitfield|webhook|sign-on/i);
    }

    // A summary with no new evaluated calls changes nothing; the new turn's call makes it stale.
    expect((await manager.summarize(["search_docs"], { evaluate: false })).tools[0].status).toBe("unchanged");
    expect((await manager.memoryFor("search_docs")).stale).toBe(false);
    await manager.evaluateCalls();
    expect((await manager.memoryFor("search_docs")).stale).toBe(true);
    expect((await manager.stats("search_docs")).totalCalls).toBe(13);
  });

  it("with a model evaluator and a model synthesizer behind the same interfaces", async () => {
    const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
    await registerTools(ledger, [searchDocs]);
    // The judge reads the masked record and scores "No results" 0.5, as the rubric asks.
    const judge = new ScriptedReplyModel((messages) => {
      const record = JSON.parse(messages[1].text.slice(messages[1].text.indexOf("{"))) as { output: { text: string } };
      const none = record.output.text.startsWith("No results");
      return JSON.stringify({
        summary: none ? "Searched, but found nothing for a vague request." : "Searched and found matching pages.",
        evaluation: none ? "Executed, but the request named no topic." : "The right tool, and the output answers it.",
        score: none ? 0.5 : 1,
        issues: none ? ["no_results"] : [],
      });
    });
    const writer = new ScriptedReplyModel(() =>
      JSON.stringify({
        coreFunction: "Finds documentation pages about a named topic.",
        whatWorks: ["Requests that name a feature or setting find pages."],
        commonIssues: ["Requests with no topic return no results."],
        bestPractices: [
          "Name the feature or setting to look for.",
          "Ask the user for a topic first when the request is vague.",
        ],
      }),
    );
    const manager = new LessonManager({
      ledger,
      index: new ToolIndex({ ledger }),
      memory: { evaluator: new ModelEvaluator(judge, { concurrency: 3 }), synthesizer: new ModelSynthesizer(writer) },
    });
    const recorder = new ToolLessonsCallbackHandler({
      ledger,
      singleTenant: true,
      failureSink: (f) => expect.fail(f.message),
    });
    const seen: BaseMessage[][] = [];
    const graph = agent(manager, seen);
    const turns = [...VAGUE_TURNS, ...SPECIFIC_TURNS];
    for (const [i, [text]] of turns.entries()) {
      await graph.invoke(
        { messages: [new HumanMessage(text)] },
        { configurable: { thread_id: `m-${i}` }, callbacks: [recorder] },
      );
    }
    await recorder.flush();

    const summary = await manager.summarize();
    expect(summary.tools.map((t) => [t.tool, t.status, t.guideline?.synthesizer])).toEqual([
      ["search_docs", "summarized", "model:ScriptedReplyModel"],
    ]);
    expect(judge.calls).toBe(12);
    expect(judge.maxInFlight).toBeLessThanOrEqual(3);
    expect(writer.calls).toBe(1);
    expect(await manager.stats("search_docs")).toMatchObject({ totalCalls: 12, avgScore: 0.6667 });
    for (const messages of [...judge.seen, ...writer.seen]) expect(messages[1].text).not.toMatch(/Margaret|Whitfield/);

    const before = seen.length;
    await graph.invoke({ messages: [new HumanMessage("is there anything at all")] }, { callbacks: [recorder] });
    expect(seen[before][0].text).toContain("- Requests with no topic return no results.");
    expect(seen[before][0].text).toContain("1. Name the feature or setting to look for.");
    expect((await manager.summarize(undefined, { evaluate: false })).tools[0].status).toBe("unchanged");
    expect(writer.calls).toBe(1);
  });
});
