/**
 * A schema refusal (the model's arguments fail the tool's zod schema) learned the same through
 * langchain's `createAgent` with `toolLessonsMiddleware` as through `createToolLessonsAgent`:
 * `createAgent`'s tool node sends the refusal wrapped ("Error invoking tool … with kwargs … with
 * error: <stack>"), the graph's as "Error: <message>". Stored, both are the error's message alone,
 * with no stack frame, so two refusals are one failure group and the review proposes the same note.
 */
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createToolLessonsAgent } from "../../src/graph/agent.js";
import { LessonManager } from "../../src/learn/manager.js";
import { Ledger } from "../../src/ledger/ledger.js";
import type { CallRecord } from "../../src/ledger/schema.js";
import { toolLessonsMiddleware } from "../../src/middleware/index.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { planScript, ScriptedChatModel } from "../helpers/record-agent.js";

const lookupOrder = () =>
  tool(async ({ order_id }) => `${order_id}: shipped`, {
    name: "lookup_order",
    description: "Look up an order: its status, items and total.",
    schema: z.object({ order_id: z.string() }),
  });

/**
 * A model that sends the order's digits as a number (refused by the schema before the tool runs),
 * tries the same once more, then gives up: the refusals are the only evidence, so the note is made
 * of their text.
 */
const refusedModel = () =>
  new ScriptedChatModel(
    planScript(
      (step, messages) => {
        if (step > 1) return undefined;
        const request = [...messages].reverse().find((m) => m.getType() === "human");
        const digits = /\d+/.exec(String(request?.content ?? ""))?.[0] ?? "0";
        return [{ name: "lookup_order", args: { order_id: Number(digits) } }];
      },
      { final: "I could not look that order up." },
    ),
  );

/**
 * Requests whose order ids are different numbers: the same refusal each time. 95 is also a line
 * number in a stack frame of Node's own (`task_queues:95:5`), which a stored stack masked as a value.
 */
const REQUESTS = ["Where is order 482913?", "Where is order 95?", "Where is order 771204?"];

/** A stack frame as V8 writes one, in a stored text (joined to one line) or on a line of its own. */
const STACK_FRAME = /\bat (?:async )?\S*\s?\(?(?:file:|node:|\/)|:\d+:\d+\)|ToolNode|task_queues/;

/** The stored error texts of the partition's refused lookup_order calls. */
async function refusals(ledger: Ledger, partition: string): Promise<CallRecord[]> {
  return (await ledger.listCalls(partition, { tool: "lookup_order" })).filter((c) => c.outcome === "error");
}

describe("a schema refusal through createAgent + toolLessonsMiddleware", () => {
  it("is stored as the error's message, the same text each time, and the review proposes the note the graph agent proposes", async () => {
    // createAgent with the middleware, the recorder in callbacks, the caller named in v1 context.
    const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
    const heard: string[] = [];
    const recorder = new ToolLessonsCallbackHandler({ ledger, failureSink: (f) => heard.push(f.kind) });
    const agent = createAgent({
      model: refusedModel(),
      tools: [lookupOrder()],
      middleware: [toolLessonsMiddleware({ ledger, failureSink: (f) => heard.push(f.kind) })],
      checkpointer: new MemorySaver(),
    });
    const sent: string[] = [];
    for (const [i, text] of REQUESTS.slice(0, 2).entries()) {
      const state = await agent.invoke(
        { messages: [new HumanMessage(text)] },
        { configurable: { thread_id: `mw-${i}` }, context: { user_id: "ann" }, callbacks: [recorder] },
      );
      await recorder.flush();
      const refusal = state.messages.find((m) => m.getType() === "tool");
      sent.push(String(refusal?.content));
    }
    // What createAgent's tool node sent the model: its wrapping and the error's stack.
    expect(sent[0]).toMatch(/^Error invoking tool 'lookup_order' with kwargs .* with error: /s);
    expect(sent[0]).toMatch(/\n {4}at /);
    expect(heard).toEqual([]);

    const stored = await refusals(ledger, "u:ann");
    expect(stored.map((c) => [c.source, c.errorClass])).toEqual(stored.map(() => ["tool_message", "validation"]));
    expect(stored).toHaveLength(4);
    const first = stored[0].errorMessage ?? "";
    expect(stored.map((c) => c.errorMessage)).toEqual(stored.map(() => first));
    expect(first).toMatch(/^Received tool input did not match expected schema\b/);
    expect(first).not.toMatch(STACK_FRAME);
    expect(first).not.toMatch(/Error invoking tool|kwargs|Please fix/);

    const review = await new LessonManager({ ledger, index: new ToolIndex({ ledger }) }).review({
      partition: "u:ann",
    });
    const viaMiddleware = review.revisions.find((r) => r.tool === "lookup_order");
    expect(viaMiddleware?.notesAdded).toHaveLength(1);

    // The graph agent, the same model and tool: it learns by itself on the turn after the evidence
    // (here the third), from the same four refusals.
    const graph = createToolLessonsAgent({
      model: refusedModel(),
      tools: [lookupOrder()],
      checkpointer: new MemorySaver(),
      failureSink: (f) => heard.push(f.kind),
    });
    for (const [i, text] of REQUESTS.entries()) {
      await graph.invoke(
        { messages: [new HumanMessage(text)] },
        { configurable: { thread_id: `graph-${i}`, user_id: "ann" }, metadata: { user_id: "ann" } },
      );
      await graph.recorder.flush();
    }
    expect(heard).toEqual([]);
    const graphStored = await refusals(graph.ledger, "u:ann");
    expect(graphStored).toHaveLength(6);
    expect(graphStored.map((c) => c.errorMessage)).toEqual(graphStored.map(() => first));
    const viaGraph = await graph.ledger.listRevisions("u:ann", { tool: "lookup_order" });
    expect(viaGraph).toHaveLength(1);
    expect(viaMiddleware?.notesAdded).toEqual(viaGraph[0].notesAdded);
    expect(viaGraph[0].notesAdded[0]).toContain("Received tool input did not match expected schema");
  });
});

describe("a tool error that carries a stack", () => {
  it("is stored as the message alone when a tool returns an error ToolMessage with its stack", async () => {
    const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
    const recorder = new ToolLessonsCallbackHandler({ ledger, singleTenant: true, failureSink: () => undefined });
    // A tool that reports its own failure to the model, stack and all (as some apps' tools do).
    const reporting = tool(
      async ({ order_id }, config) => {
        const error = new Error(`Order ${order_id} is archived: ask for a newer one`);
        const id = (config as { toolCall?: { id?: string } }).toolCall?.id ?? "";
        return new ToolMessage({ content: String(error.stack), status: "error", tool_call_id: id });
      },
      { name: "lookup_order", description: "Look up an order.", schema: z.object({ order_id: z.string() }) },
    );
    const agent = createAgent({
      model: new ScriptedChatModel(
        planScript((step) => (step === 0 ? [{ name: "lookup_order", args: { order_id: "482913" } }] : undefined)),
      ),
      tools: [reporting],
    });
    const state = await agent.invoke(
      { messages: [new HumanMessage("Where is order 482913?")] },
      { callbacks: [recorder] },
    );
    await recorder.flush();
    expect(String(state.messages.find((m) => m.getType() === "tool")?.content)).toMatch(/\n {4}at /);
    const [call] = await refusals(ledger, "default");
    expect(call.errorMessage).toBe("Order <value> is archived: ask for a newer one");
  });
});
