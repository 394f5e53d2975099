/**
 * `search_tools` (cache-keeping mode): answered by the router in the caller's partition only (the
 * caller resolved as serving resolves it), never from another partition or the fallback one,
 * never echoing the query, and within `timeoutMs` when the index hangs.
 */
import { type ToolMessage } from "@langchain/core/messages";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { supportDeskTools } from "../../examples/support-desk.js";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { createSearchToolsTool } from "../../src/serve/search-tools.js";
import { type SearchToolsArtifact } from "../../src/serve/tool-set.js";
import { TurnServer } from "../../src/serve/turn-server.js";

const wireMoney = { name: "wire_money", description: "Wire money to a bank account by international transfer." };

async function setup(options: { ledger?: Ledger; index?: ToolIndex; timeoutMs?: number } = {}) {
  const ledger = options.ledger ?? new Ledger(new InMemoryStore());
  await registerTools(ledger, supportDeskTools(), { partition: "u:ann" });
  await registerTools(ledger, [wireMoney, ...supportDeskTools()], { partition: "u:bob" });
  await registerTools(ledger, [wireMoney], { partition: "default" });
  const failures: ToolLessonsFailure[] = [];
  const server = new TurnServer({
    ledger,
    ...(options.index ? { index: options.index } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    onFailure: (f) => failures.push(f),
  });
  return { ledger, server, failures };
}

async function search(tool: ReturnType<typeof createSearchToolsTool>, query: string, user: string, thread = "t") {
  const message = (await tool.invoke(
    { name: "search_tools", args: { query }, id: "call_1", type: "tool_call" },
    { configurable: { thread_id: `${thread}-${user}` }, context: { user_id: user } },
  )) as ToolMessage;
  return {
    content: String(message.content),
    found: (message.artifact as SearchToolsArtifact).found.map((t) => t.name),
    message,
  };
}

describe("search_tools", () => {
  it("answers from the caller's partition only", async () => {
    const { server, failures } = await setup();
    const tool = createSearchToolsTool(server);
    const bob = await search(tool, "wire money by international transfer", "bob");
    expect(bob.found[0]).toBe("wire_money");
    const ann = await search(tool, "wire money by international transfer", "ann");
    expect(ann.found).not.toContain("wire_money");
    expect(ann.content).not.toContain("wire_money");
    // A caller with no tools of their own gets nothing: no fallback to the default partition's tools.
    const cleo = await search(tool, "wire money by international transfer", "cleo");
    expect(cleo.found).toEqual([]);
    // The router says it routed the fallback partition's tools for cleo; search_tools kept none of them.
    expect(failures.map((f) => f.kind)).toEqual(["routing_fallback"]);
  });

  it("names only the agent's own tools when given them, with one line each and never the query", async () => {
    const { server } = await setup();
    const tool = createSearchToolsTool(server, supportDeskTools());
    const query = "email the customer ORD-553311 about a refund for dana@x.test";
    const bob = await search(tool, query, "bob");
    expect(bob.found.length).toBeGreaterThan(0);
    expect(bob.found.length).toBeLessThanOrEqual(3);
    expect(bob.found).not.toContain("wire_money");
    for (const line of bob.content.split("\n").slice(1)) expect(line).toMatch(/^- [a-z_]+: [^\n]+$/);
    for (const part of ["ORD-553311", "dana@x.test", query]) {
      expect(bob.content).not.toContain(part);
      expect(JSON.stringify(bob.message.artifact)).not.toContain(part);
    }
  });

  it("answers within the bound, with nothing found, when the index hangs; the sink hears it", async () => {
    class HangingIndex extends ToolIndex {
      override async embedQuery(): Promise<never> {
        return new Promise<never>(() => undefined);
      }
    }
    const ledger = new Ledger(new InMemoryStore());
    const { server, failures } = await setup({ ledger, index: new HangingIndex({ ledger }), timeoutMs: 100 });
    const tool = createSearchToolsTool(server);
    const t0 = performance.now();
    const ann = await search(tool, "refund an order", "ann");
    const ms = performance.now() - t0;
    expect(ann.found).toEqual([]);
    expect(ann.content).toMatch(/^No other tool was found/);
    expect(ms).toBeLessThan(100 + 1_500);
    expect(failures.map((f) => [f.stage, f.kind])).toEqual([["serve", "search_tools"]]);
    expect(failures[0].message).not.toContain("refund");
  });
});
