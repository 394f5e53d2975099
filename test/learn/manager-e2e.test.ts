import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BindToolsInput,
} from "@langchain/core/language_models/chat_models";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import { AIMessage, type AIMessageChunk, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import type { Runnable } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { type BaseStore, END, InMemoryStore, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { LEARNED_HEADING, withDescriptions } from "../../src/prompt/describe.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";
import { LessonManager } from "../../src/learn/manager.js";
import { registerTools } from "../../src/learn/register.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { stepOf } from "../helpers/record-agent.js";

/**
 * The whole loop with real parts: a LangGraph agent (StateGraph over MessagesAnnotation, the
 * prebuilt ToolNode, tools made with `tool()` and zod), the real recorder in `callbacks`, a
 * review that proposes a usage note and an example call from two refused calls, an operator who
 * applies it, the next run's model being sent it in the tool's description, an undo that takes
 * it away again, and the history of it all. Nothing but masked text is stored.
 */

const LOOKUP_DESCRIPTION = "Look up an order by its id and tell where it is.";
const CANCEL_DESCRIPTION = "Cancel an order that has not shipped yet.";

const lookupOrder = tool(
  async ({ order_id }) => {
    if (!order_id.startsWith("ORD-")) throw new Error(`order_id must start with ORD-: got ${order_id}`);
    return JSON.stringify({ order_id, status: "in transit" });
  },
  { name: "lookup_order", description: LOOKUP_DESCRIPTION, schema: z.object({ order_id: z.string() }) },
);
const cancelOrder = tool(async ({ order_id }) => `cancelled ${order_id}`, {
  name: "cancel_order",
  description: CANCEL_DESCRIPTION,
  schema: z.object({ order_id: z.string() }),
});
const TOOLS = [lookupOrder, cancelOrder];

interface AgentModelCallOptions extends BaseChatModelCallOptions {
  tools?: ReturnType<typeof convertToOpenAITool>[];
}

/**
 * A scripted chat model that binds tools the way provider models do (converted to tool
 * definitions and sent with each call) and keeps what every call was sent. Its script: call
 * `lookup_order` with the digits of the user's order, and when refused, again with the "ORD-"
 * prefix; a model whose tool description shows the id format gets it right the first time.
 */
class AgentModel extends BaseChatModel<AgentModelCallOptions> {
  /** Per model call: each bound tool's name and the description the model was sent. */
  readonly received: Record<string, string>[] = [];

  constructor() {
    super({});
  }

  _llmType(): string {
    return "scripted-agent";
  }

  override bindTools(tools: BindToolsInput[]): Runnable<BaseLanguageModelInput, AIMessageChunk, AgentModelCallOptions> {
    return this.withConfig({ tools: tools.map((t) => convertToOpenAITool(t)) });
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const sent = Object.fromEntries((options.tools ?? []).map((t) => [t.function.name, t.function.description ?? ""]));
    this.received.push(sent);
    const human = [...messages].reverse().find((m) => m.getType() === "human");
    const digits = /\d+/.exec(human?.text ?? "")?.[0] ?? "0";
    const plan = (sent.lookup_order ?? "").includes("ORD-#####") ? [`ORD-${digits}`] : [digits, `ORD-${digits}`];
    const step = stepOf(messages);
    const message =
      step < plan.length
        ? new AIMessage({
            content: "",
            tool_calls: [
              {
                id: `call_${this.received.length}`,
                name: "lookup_order",
                args: { order_id: plan[step] },
                type: "tool_call",
              },
            ],
          })
        : new AIMessage("Your order is in transit.");
    return { generations: [{ text: message.text, message }] };
  }
}

/** Values the runs pass; none may be stored. */
const ORDERS = ["48213", "77120", "55107", "66093"];
const VALUE = new RegExp(`(?<![0-9A-Za-z])(${ORDERS.join("|")})(?![0-9A-Za-z])`);

/** Every row of every namespace of a store, as JSON text. */
async function allRows(store: BaseStore): Promise<string[]> {
  const rows = new Map<string, string>();
  for (const namespace of await store.listNamespaces({ limit: 10_000 })) {
    for (const item of await store.search(namespace, { limit: 10_000 })) {
      rows.set(`${item.namespace.join("/")}\u0000${item.key}`, JSON.stringify(item.value));
    }
  }
  return [...rows.values()];
}

const backends: {
  name: string;
  open: () => Promise<{ store: BaseStore; files?: string; close: () => Promise<void> }>;
}[] = [
  {
    name: "InMemoryStore",
    open: async () => ({ store: new InMemoryStore(), close: async () => undefined }),
  },
  {
    name: "SqliteStore (file)",
    open: async () => {
      const dir = mkdtempSync(join(tmpdir(), "tl-e2e-"));
      const store = await SqliteStore.open(join(dir, "ledger.db"));
      return {
        store,
        files: dir,
        close: async () => {
          await store.close();
        },
      };
    },
  },
];

describe.each(backends)("learning end to end on a real LangGraph agent ($name)", ({ open }) => {
  it("records refused calls, proposes a note and an example call, shows them to the model once applied, takes them back on undo", async () => {
    const backend = await open();
    try {
      const ledger = new Ledger(backend.store, { failureSink: () => undefined });
      const errors: unknown[] = [];
      const recorder = new ToolLessonsCallbackHandler({ ledger, failureSink: (f) => errors.push(f) });
      const partition = "u:u-7";
      await registerTools(ledger, TOOLS, { partition });
      const manager = new LessonManager({ ledger, index: new ToolIndex({ ledger }) });

      const model = new AgentModel();
      const graph = new StateGraph(MessagesAnnotation)
        .addNode("agent", async (state, config) => {
          const bound = model.bindTools(withDescriptions(TOOLS, await ledger.listCards(partition)));
          return { messages: [await bound.invoke(state.messages, config)] };
        })
        .addNode("tools", new ToolNode(TOOLS))
        .addEdge(START, "agent")
        .addConditionalEdges("agent", toolsCondition, ["tools", END])
        .addEdge("tools", "agent")
        .compile();

      /** One user request; returns what the model was sent first and the calls recorded. */
      let runs = 0;
      const ask = async (order: string) => {
        runs += 1;
        const from = model.received.length;
        await graph.invoke(
          { messages: [new HumanMessage(`Where is my order ${order}?`)] },
          { configurable: { thread_id: `thread-${runs}` }, metadata: { user_id: "u-7" }, callbacks: [recorder] },
        );
        await recorder.flush();
        const calls = (await ledger.listCalls(partition, { tool: "lookup_order" })).filter(
          (c) => c.threadId === `thread-${runs}`,
        );
        return { sent: model.received[from], calls };
      };

      // Two runs: each refused for the bare number, then right with the prefix.
      const run1 = await ask(ORDERS[0]);
      // "ORD" is the letter part of the run's masked shape (ORD-#####): format, kept in the row.
      expect(run1.calls.map((c) => c.errorMessage)).toEqual(["order_id must start with ORD-: got <value>", undefined]);
      const run2 = await ask(ORDERS[1]);
      expect(errors).toEqual([]);
      expect(run1.sent).toEqual({ lookup_order: LOOKUP_DESCRIPTION, cancel_order: CANCEL_DESCRIPTION });
      // The second thread's row reads the same.
      const stored = await ledger.listCalls(partition, { tool: "lookup_order" });
      for (const thread of ["thread-1", "thread-2"]) {
        expect(
          stored.filter((c) => c.threadId === thread).map((c) => [c.outcome, c.errorClass, c.errorMessage]),
        ).toEqual([
          ["error", "validation", "order_id must start with ORD-: got <value>"],
          ["success", undefined, undefined],
        ]);
      }
      const failed = [run1.calls[0].id, run2.calls[0].id];

      const review = await manager.review({ partition });
      expect(review.revisions).toHaveLength(1);
      const proposed = review.revisions[0];
      const note = "order_id must look like ORD-#####; calls with ##### were refused (validation).";
      const example = 'Example call: {"order_id": "ORD-#####"}';
      expect(proposed).toMatchObject({
        tool: "lookup_order",
        status: "proposed",
        notesAdded: [note],
        callExample: example,
      });
      expect(proposed.evidence).toEqual([
        {
          kind: "failed_call",
          callIds: failed,
          errorClass: "validation",
          errorMessage: "order_id must start with ORD-: got <value>",
          argNames: ["order_id"],
        },
      ]);

      await manager.apply(proposed.id, { partition, approvedBy: "operator-7" });

      // The next run: the model is sent the learned lines under the tool's own description.
      const run3 = await ask(ORDERS[2]);
      expect(run3.sent.lookup_order).toBe(`${LOOKUP_DESCRIPTION}\n\n${LEARNED_HEADING}\n- ${note}\n- ${example}`);
      expect(run3.sent.cancel_order).toBe(CANCEL_DESCRIPTION);
      expect(run3.calls.map((c) => c.outcome)).toEqual(["success"]);

      const undone = await manager.undo("lookup_order", { partition, approvedBy: "operator-7" });
      expect(undone.id).toBe(proposed.id);

      const run4 = await ask(ORDERS[3]);
      expect(run4.sent).toEqual({ lookup_order: LOOKUP_DESCRIPTION, cancel_order: CANCEL_DESCRIPTION });
      expect(run4.calls.map((c) => c.outcome)).toEqual(["error", "success"]);

      const history = await manager.history("lookup_order", { partition });
      expect(history.map((r) => [r.id, r.status, r.approvedBy, r.closedBy])).toEqual([
        [proposed.id, "undone", "operator-7", "operator-7"],
      ]);
      expect(history[0].learnedBefore).toEqual({ examples: [], notes: [], notFor: [], exampleCall: null });
      expect(history[0].cardVersionAfter).toBe(proposed.cardVersionBefore + 1);

      // Not one raw value in any stored row (calls, turns, cards, revisions, marks, settings).
      expect(VALUE.test(JSON.stringify({ order_id: `ORD-${ORDERS[0]}` }))).toBe(true);
      const rows = await allRows(backend.store);
      expect(rows.length).toBeGreaterThanOrEqual(4 * 2 + 4);
      expect(rows.filter((row) => VALUE.test(row))).toEqual([]);
    } finally {
      await backend.close();
    }
    const dir = backend.files;
    if (dir) {
      // The SQLite files themselves, write-ahead log included (they do hold the masked rows).
      const files = readdirSync(dir).map((name) => readFileSync(join(dir, name)).toString("latin1"));
      expect(files.some((text) => text.includes("order_id must start with ORD-: got <value>"))).toBe(true);
      for (const text of files) expect(VALUE.test(text)).toBe(false);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
