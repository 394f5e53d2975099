import { HumanMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { type BaseStore, InMemoryStore, type Operation, type OperationResults } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { createRecallRulesTool } from "../../src/rules/recall-tool.js";
import { LessonRetriever } from "../../src/rules/retriever.js";
import { putRule } from "../../src/rules/store.js";
import { buildAgent, planScript, ScriptedChatModel } from "../helpers/record-agent.js";

/** An InMemoryStore that counts the writes it is asked for. */
class CountingStore extends InMemoryStore {
  writes = 0;
  override async batch<Op extends readonly Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    this.writes += operations.filter((op) => "value" in op).length;
    return super.batch(operations);
  }
}

async function seeded(store: BaseStore) {
  const ledger = new Ledger(store);
  const normal = { priority: "normal", source: "programmatic" } as const;
  await putRule(
    ledger,
    { ...normal, tool: "send_email", rule: "Attach invoices as PDF files." },
    { partition: "u:alice" },
  );
  await putRule(
    ledger,
    { ...normal, tool: "send_email", rule: "Sign newsletters as the marketing team." },
    { partition: "u:alice" },
  );
  await putRule(
    ledger,
    { tool: "send_email", rule: "Never email Sarah.", priority: "critical", source: "user_explicit" },
    {
      partition: "u:alice",
    },
  );
  await putRule(ledger, { ...normal, tool: "send_email", rule: "Sign emails as Bob." }, { partition: "u:bob" });
  return ledger;
}

/** Run an agent whose model calls the recall tool once with `args`, as `user`; the tool's reply. */
async function recallInAgent(
  tool: ReturnType<typeof createRecallRulesTool>,
  args: Record<string, unknown>,
  user: string,
) {
  const model = new ScriptedChatModel(
    planScript((step) => (step === 0 ? [{ name: "recall_tool_rules", args }] : undefined)),
  );
  const graph = buildAgent({ model, tools: [tool] });
  const out = await graph.invoke(
    { messages: [new HumanMessage("write to the team")] },
    { configurable: { thread_id: `t-${user}`, user_id: user } },
  );
  const replies = (out.messages as BaseMessage[]).filter((m): m is ToolMessage => m instanceof ToolMessage);
  expect(replies).toHaveLength(1);
  return String(replies[0].content);
}

describe("recall_tool_rules inside a real ToolNode", () => {
  it("returns the caller's rules for the tool as text, pinned first, and none of another caller's", async () => {
    const recall = createRecallRulesTool({ ledger: await seeded(new InMemoryStore()) });
    expect(recall.name).toBe("recall_tool_rules");
    const alice = await recallInAgent(recall, { tool: "send_email" }, "alice");
    expect(alice.split("\n")).toEqual([
      "Rules for `send_email`:",
      "- [critical] Never email Sarah.",
      expect.stringMatching(/^- \[normal\] /),
      expect.stringMatching(/^- \[normal\] /),
    ]);
    expect(alice).not.toContain("Bob");
    const bob = await recallInAgent(recall, { tool: "send_email" }, "bob");
    expect(bob).toBe("Rules for `send_email`:\n- [normal] Sign emails as Bob.");
  });

  it("puts the rules most relevant to the query first, with or without a retriever", async () => {
    const ledger = await seeded(new InMemoryStore());
    for (const recall of [
      createRecallRulesTool({ ledger }),
      createRecallRulesTool({ ledger, retriever: new LessonRetriever({ ledger }) }),
    ]) {
      const text = await recallInAgent(recall, { tool: "send_email", query: "monthly newsletter" }, "alice");
      expect(text.split("\n").slice(1, 3)).toEqual([
        "- [critical] Never email Sarah.",
        "- [normal] Sign newsletters as the marketing team.",
      ]);
    }
  });

  it("says so for a tool with no rules, caps how many it returns, and writes nothing", async () => {
    const store = new CountingStore();
    const ledger = await seeded(store);
    const before = store.writes;
    const recall = createRecallRulesTool({ ledger, maxRules: 1 });
    expect(await recallInAgent(recall, { tool: "book_hotel" }, "alice")).toBe('No rules are stored for "book_hotel".');
    expect(await recallInAgent(recall, { tool: "send_email" }, "alice")).toBe(
      "Rules for `send_email`:\n- [critical] Never email Sarah.\n(2 more, less relevant, not shown.)",
    );
    expect(store.writes).toBe(before);
  });
});
