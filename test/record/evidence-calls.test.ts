import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { InMemoryStore } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { detect } from "../../src/learn/detect.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { reAskedAway } from "../../src/routing/wordings.js";
import { SEARCH_TOOLS_NAME } from "../../src/serve/tool-set.js";

/**
 * The package's own `search_tools` (cache-keeping mode) is called to find tools, not to serve a
 * request: its calls are no evidence about a user's tool. Before, a turn whose last successful
 * call was `search_tools` was "served" by it, so the thread's turn before it counted as a confusion
 * of the tool that had served it, and its wording was dropped as asked away; tool memory read
 * `search_tools` as one of the partition's called tools.
 */

const lookup = tool(async ({ order }: { order: string }) => `order ${order}: shipped`, {
  name: "lookup_order",
  description: "Look up an order.",
  schema: z.object({ order: z.string() }),
});
const search = tool(async () => "No other tool was found for that. Go on with the tools you have.", {
  name: SEARCH_TOOLS_NAME,
  description: "Find more of your tools.",
  schema: z.object({ query: z.string() }),
});

type Step = { name: string; args: Record<string, string> };
const LOOKUP: Step = { name: "lookup_order", args: { order: "A-1" } };
const SEARCH: Step = { name: SEARCH_TOOLS_NAME, args: { query: "refund an order" } };

async function turn(handler: ToolLessonsCallbackHandler, thread_id: string, text: string, steps: Step[]) {
  let llm = fakeModel();
  for (const [i, step] of steps.entries()) llm = llm.respondWithTools([{ ...step, id: `call-${i}` }]);
  llm = llm.respond(new AIMessage("done"));
  await createReactAgent({ llm, tools: [lookup, search] }).invoke(
    { messages: [new HumanMessage(text)] },
    { configurable: { thread_id }, metadata: { user_id: "u-1" }, callbacks: [handler] },
  );
}

describe("calls of the package's own search_tools", () => {
  it("are no call records, never serve a turn, and make no miss, confusion or asked-away wording", async () => {
    const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
    const handler = new ToolLessonsCallbackHandler({ ledger, failureSink: () => undefined });
    await turn(handler, "t-1", "Where is my order?", [LOOKUP]);
    await turn(handler, "t-1", "Can I get a refund?", [SEARCH]);
    await turn(handler, "t-2", "Where is my parcel?", [LOOKUP, SEARCH]);
    // Every admitted record is written: the search calls were never counted as records.
    expect(await handler.flush()).toMatchObject({ written: 2 + 3, lost: 0 });

    expect(await ledger.listCalledTools("u:u-1")).toEqual(["lookup_order"]);
    const turns = await ledger.listTurns("u:u-1");
    expect(turns.map((t) => t.servedBy)).toEqual(["lookup_order", undefined, "lookup_order"]);
    // The turn still says what the run did.
    expect(turns[1].calls.map((c) => c.tool)).toEqual([SEARCH_TOOLS_NAME]);

    const found = detect({ turns, routes: [], calls: await ledger.listCalls("u:u-1"), tools: ["lookup_order"] });
    expect(found.tools.get("lookup_order")).toMatchObject({ calls: 2, misses: [], confusions: [] });
    expect(reAskedAway(turns)).toEqual(new Set());
  });
});
