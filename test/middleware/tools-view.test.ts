/**
 * What the model is shown of the tools on a createAgent model call (`toolsForModel`), and why the
 * learned descriptions go out as plain definitions: createAgent refuses a re-described view of a
 * registered tool, and accepts the narrowed instances plus plain definitions.
 */
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { createAgent, createMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { cardFromTool } from "../../src/ledger/cards.js";
import type { ToolCard } from "../../src/ledger/schema.js";
import { toolsForModel } from "../../src/middleware/tools-view.js";
import { withDescriptions } from "../../src/prompt/describe.js";
import { DeskModel, type ModelView } from "./desk-agent.js";

const lookup = tool(async ({ order_id }) => `order ${order_id}`, {
  name: "lookup_order",
  description: "Look up an order.",
  schema: z.object({ order_id: z.string().describe("The order's id.") }),
});
const track = tool(async () => "on its way", {
  name: "track_shipment",
  description: "Track a parcel.",
  schema: z.object({ order_id: z.string() }),
});
const providerTool = { type: "web_search_preview" };

function learned(source: typeof lookup, note: string): ToolCard {
  const card = cardFromTool(source, "default", 1);
  return { ...card, learned: { ...card.learned, notes: [{ text: note, revisionId: "rev_1" }] } };
}

describe("toolsForModel", () => {
  it("keeps the routed tools in the request's order, drops the rest, keeps provider tools as they are", () => {
    const out = toolsForModel([track, providerTool, lookup], ["lookup_order", "track_shipment"], []);
    expect(out).toEqual([track, providerTool, lookup]);
    expect(out[0]).toBe(track);
    expect(toolsForModel([track, providerTool, lookup], ["lookup_order"], [])).toEqual([providerTool, lookup]);
  });

  it("sends every tool when routing was skipped", () => {
    expect(toolsForModel([track, lookup], undefined, [])).toEqual([track, lookup]);
  });

  it("replaces a tool whose card adds lines with a plain definition: the shown description, the tool's own schema", () => {
    const [first, second] = toolsForModel([lookup, track], undefined, [
      learned(lookup, "order_id must look like ORD-######."),
    ]);
    expect(second).toBe(track);
    expect(first).not.toBe(lookup);
    expect(first).toEqual({
      name: "lookup_order",
      description: "Look up an order.\n\nLearned from use:\n- order_id must look like ORD-######.",
      schema: lookup.schema,
    });
    // What a provider is sent: the same function, parameters included, with the new description.
    const sent = convertToOpenAITool(first as Parameters<typeof convertToOpenAITool>[0]);
    const own = convertToOpenAITool(lookup);
    expect(sent.function.description).toBe((first as { description: string }).description);
    expect(sent.function.parameters).toEqual(own.function.parameters);
    expect(sent.function.name).toBe("lookup_order");
  });

  it("keeps the instance when the card adds nothing, and is byte-stable", () => {
    const card = cardFromTool(lookup, "default", 1);
    expect(toolsForModel([lookup], undefined, [card])[0]).toBe(lookup);
    const cards = [learned(lookup, "A note.")];
    expect(JSON.stringify(toolsForModel([lookup], undefined, cards))).toBe(
      JSON.stringify(toolsForModel([lookup], undefined, cards)),
    );
  });
});

describe("what createAgent accepts from a wrapModelCall", () => {
  const ask = (middleware: ReturnType<typeof createMiddleware>, views: ModelView[]) =>
    createAgent({ model: new DeskModel(views), tools: [lookup, track], middleware: [middleware] }).invoke({
      messages: [new HumanMessage("Where is order ORD-123456?")],
    });
  const cards = [learned(lookup, "order_id must look like ORD-######.")];

  it("refuses re-described views of the registered tools (withDescriptions)", async () => {
    const views: ModelView[] = [];
    const swap = createMiddleware({
      name: "Views",
      wrapModelCall: (request, handler) =>
        handler({ ...request, tools: withDescriptions([lookup, track], cards) as typeof request.tools }),
    });
    await expect(ask(swap, views)).rejects.toThrow(/You have modified a tool .*lookup_order/);
    expect(views).toEqual([]);
  });

  it("accepts the narrowed instances plus plain definitions, and runs the registered tool for a call to one", async () => {
    const views: ModelView[] = [];
    const plain = createMiddleware({
      name: "Plain",
      wrapModelCall: (request, handler) =>
        handler({ ...request, tools: toolsForModel(request.tools, ["lookup_order"], cards) as typeof request.tools }),
    });
    const state = await ask(plain, views);
    expect(views[0].tools.map((t) => t.name)).toEqual(["lookup_order"]);
    expect(views[0].tools[0].description).toContain("Learned from use:");
    expect(state.messages.find((m) => m.getType() === "tool")?.content).toBe("order ORD-123456");
  });
});
