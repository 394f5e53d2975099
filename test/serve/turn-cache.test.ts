/**
 * What serving keeps between turns (src/serve/turn-cache.ts): an unchanged request is not routed
 * again and unchanged lessons are not rendered again; a changed card routes and renders again, a
 * changed rule renders again. The route record is written every turn all the same.
 */
import { HumanMessage } from "@langchain/core/messages";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it, vi } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { ToolRouter } from "../../src/routing/router.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { putRule } from "../../src/rules/store.js";
import { TurnServer } from "../../src/serve/turn-server.js";
import { deskTools } from "../graph/desk.js";

const rendered = vi.hoisted(() => ({ count: 0 }));
vi.mock("../../src/prompt/lessons-block.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/prompt/lessons-block.js")>();
  return {
    ...actual,
    renderLessonsBlock: (...args: Parameters<typeof actual.renderLessonsBlock>) => {
      rendered.count += 1;
      return actual.renderLessonsBlock(...args);
    },
  };
});

const searched = vi.hoisted(() => ({ texts: [] as string[] }));
vi.mock("../../src/rules/capture.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/rules/capture.js")>();
  return {
    ...actual,
    findEdicts: (...args: Parameters<typeof actual.findEdicts>) => {
      searched.texts.push(args[0]);
      return actual.findEdicts(...args);
    },
  };
});

const config = (thread: string) => ({ configurable: { thread_id: thread, user_id: "ann" } });
const ask = (text: string) => [new HumanMessage(text)];

async function setup() {
  const ledger = new Ledger(new InMemoryStore());
  const index = new ToolIndex({ ledger });
  const router = new ToolRouter({ index, maxTools: 2 });
  const route = vi.spyOn(router, "route");
  const server = new TurnServer({ ledger, router, captureEdicts: false });
  const tools = deskTools();
  rendered.count = 0;
  return { ledger, index, route, server, tools };
}

describe("serving keeps what did not change", () => {
  it("an unchanged request is neither routed nor rendered again, in any thread; each turn's route is recorded", async () => {
    const { ledger, route, server, tools } = await setup();
    const first = await server.serve({ messages: ask("Where is order ORD-123456?"), tools }, config("c-1"));
    expect(route).toHaveBeenCalledTimes(1);
    expect(rendered.count).toBe(1);
    const again = await server.serve({ messages: ask("Where is order ORD-123456?"), tools }, config("c-2"));
    expect(route).toHaveBeenCalledTimes(1);
    expect(rendered.count).toBe(1);
    expect(again.tools).toEqual(first.tools);
    expect(again.routing?.offered).toEqual(first.routing?.offered);
    expect(again.block.text).toBe(first.block.text);
    expect((await ledger.listRoutes("u:ann")).map((r) => r.threadId)).toEqual(["c-1", "c-2"]);
    // Another request is routed.
    await server.serve({ messages: ask("Refund my order please"), tools }, config("c-3"));
    expect(route).toHaveBeenCalledTimes(2);
  });

  it("a changed card routes and renders again: the model is shown what was learned at once", async () => {
    const { ledger, index, route, server, tools } = await setup();
    const messages = ask("Where is order ORD-123456?");
    const first = await server.serve({ messages, tools }, config("c-1"));
    expect(first.shownCards).toEqual([]);
    const card = (await ledger.getCard("u:ann", "lookup_order"))!;
    const changed = await ledger.putCard({
      ...card,
      learned: {
        ...card.learned,
        notes: [{ text: "order_id must look like ORD-######.", revisionId: "rev_1" }],
        examples: [...card.learned.examples, { text: "whereabouts of my parcel", source: "learned", addedAt: 1 }],
      },
    });
    await index.upsertCards("u:ann", [changed]);
    const after = await server.serve({ messages, tools }, config("c-2"));
    expect(route).toHaveBeenCalledTimes(2);
    expect(rendered.count).toBe(2);
    expect(after.shownCards.map((c) => c.learned.notes.map((n) => n.text))).toEqual([
      ["order_id must look like ORD-######."],
    ]);
  });

  it("a changed rule renders again without routing again", async () => {
    const { ledger, route, server, tools } = await setup();
    const messages = ask("Where is order ORD-123456?");
    const first = await server.serve({ messages, tools }, config("c-1"));
    expect(first.block.text).toBe("");
    await putRule(
      ledger,
      { tool: first.tools![0], rule: "Never read out a card number.", priority: "critical", source: "user_explicit" },
      { partition: "u:ann" },
    );
    const after = await server.serve({ messages, tools }, config("c-2"));
    expect(route).toHaveBeenCalledTimes(1);
    expect(rendered.count).toBe(2);
    expect(after.block.text).toContain("[critical] Never read out a card number.");
  });

  it("a request text that held no edict is not searched again; one that holds an edict is, every time", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const server = new TurnServer({
      ledger,
      router: new ToolRouter({ index: new ToolIndex({ ledger }), maxTools: 2 }),
    });
    const tools = deskTools();
    searched.texts = [];
    await server.serve({ messages: ask("Where is order ORD-123456?"), tools }, config("e-1"));
    await server.serve({ messages: ask("Where is order ORD-123456?"), tools }, config("e-2"));
    expect(searched.texts).toEqual(["Where is order ORD-123456?"]);
    await server.serve({ messages: ask("Never email Sarah."), tools }, config("e-3"));
    const rules = await ledger.listRules("u:ann");
    expect(rules.map((r) => r.rule)).toEqual(["Never email Sarah."]);
    await ledger.deleteRule("u:ann", rules[0].id);
    // The same edict asked again is searched again and stored again.
    await server.serve({ messages: ask("Never email Sarah."), tools }, config("e-4"));
    expect(searched.texts).toEqual(["Where is order ORD-123456?", "Never email Sarah.", "Never email Sarah."]);
    expect((await ledger.listRules("u:ann")).map((r) => r.rule)).toEqual(["Never email Sarah."]);
  });
});
