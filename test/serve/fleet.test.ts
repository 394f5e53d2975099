/**
 * One process, objects built apart: the agent (the ready graph agent, or createAgent with the
 * middleware) is one long-lived object over the app's store, and the operator is a second
 * `LessonManager` with its own ledger and index over the same store. What the manager applies or
 * undoes reaches the agent through the store alone, and is served on the agent's next turn.
 */
import { HumanMessage } from "@langchain/core/messages";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { createToolLessonsAgent } from "../../src/graph/agent.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { LessonManager } from "../../src/learn/manager.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { DeskModel, deskTools, human } from "../graph/desk.js";
import { deskAgent, type ModelView } from "../middleware/desk-agent.js";
import { proposeExample } from "../helpers/propose-example.js";

/** A wording that shares no word with any desk tool's description. */
const WORDING = "whereabouts of my stuff right now";

/** The operator: a manager of its own over the store, as another part of the app builds it. */
function operatorOver(store: InMemoryStore): LessonManager {
  const ledger = new Ledger(store);
  return new LessonManager({ ledger, index: new ToolIndex({ ledger }) });
}

describe("a second manager over the agent's store", () => {
  it("createToolLessonsAgent routes an example the manager applied on its next turn, and stops after the undo", async () => {
    const store = new InMemoryStore();
    const agent = createToolLessonsAgent({
      model: new DeskModel(),
      tools: deskTools(),
      store,
      maxTools: 2,
      timeoutMs: 15_000,
    });
    let turns = 0;
    const routed = async () => {
      const state = await agent.invoke(
        { messages: [human(WORDING)] },
        { configurable: { thread_id: `one-${++turns}`, user_id: "alice" }, metadata: { user_id: "alice" } },
      );
      return state.routedTools as string[];
    };
    const before = await routed();
    expect(before[0]).not.toBe("track_parcel");
    const manager = operatorOver(store);
    const revision = await proposeExample(manager.ledger, "u:alice", "track_parcel", WORDING);
    await manager.apply(revision.id, { approvedBy: "ops", partition: "u:alice" });
    expect((await routed())[0]).toBe("track_parcel");
    await manager.undo("track_parcel", { approvedBy: "ops", partition: "u:alice" });
    expect(await routed()).toEqual(before);
  });

  it("createAgent with the middleware offers the tool on its next model call", async () => {
    const store = new InMemoryStore();
    const views: ModelView[] = [];
    const { agent } = deskAgent({ views, store, maxTools: 1, timeoutMs: 15_000 });
    let turns = 0;
    const offered = async () => {
      await agent.invoke(
        { messages: [new HumanMessage(WORDING)] },
        { configurable: { thread_id: `mw-${++turns}` }, context: { user_id: "erin" } },
      );
      return views.at(-1)?.tools.map((t) => t.name) ?? [];
    };
    expect(await offered()).not.toEqual(["track_shipment"]);
    const manager = operatorOver(store);
    const revision = await proposeExample(manager.ledger, "u:erin", "track_shipment", WORDING);
    await manager.apply(revision.id, { approvedBy: "ops", partition: "u:erin" });
    expect(await offered()).toEqual(["track_shipment"]);
  });
});
