/**
 * The app object: one of each piece, the views over it, its one sink, and the check at the door.
 */
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { createToolLessons, ToolLessons } from "../../src/app/app.js";
import { InvalidInput } from "../../src/errors.js";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { createToolLessonsAgent } from "../../src/graph/agent.js";
import { createLessonsGraph } from "../../src/graph/lessons-graph.js";
import { toolLessonsMiddleware } from "../../src/middleware/index.js";
import { DeskModel, deskTools, human } from "../graph/desk.js";
import { proposeExample } from "../helpers/propose-example.js";

/** A wording that shares no word with any desk tool's description. */
const WORDING = "whereabouts of my stuff right now";

describe("createToolLessons", () => {
  it("owns one of each piece, and every view over it shares them", () => {
    const store = new InMemoryStore();
    const tools = deskTools();
    const app = createToolLessons({ store, tools, maxTools: 2 });
    expect(app).toBeInstanceOf(ToolLessons);
    // The same object each time: one recorder, one manager, one index and router per ledger.
    expect(app.recorder).toBe(app.recorder);
    expect(app.manager()).toBe(app.manager());
    expect(app.manager().index).toBe(app.index());
    expect(app.router().index).toBe(app.index());
    expect(app.ledgerFor(store)).toBe(app.ledger);
    expect(app.ledger.store).toBe(store);

    const agent = createToolLessonsAgent({ app, model: new DeskModel(), tools });
    expect(agent.app).toBe(app);
    expect(agent.recorder).toBe(app.recorder);
    expect(agent.ledger).toBe(app.ledger);
    const middleware = toolLessonsMiddleware({ app });
    expect(middleware.app).toBe(app);
    // An agent built from options alone exposes the app it made.
    const own = createToolLessonsAgent({ model: new DeskModel(), tools, store });
    expect(own.app).toBeInstanceOf(ToolLessons);
    expect(own.app.ledger).toBe(own.ledger);
  });

  it("an apply through the app's manager is routed on the agent's next turn, and the undo takes it back", async () => {
    const app = createToolLessons({ store: new InMemoryStore(), tools: deskTools(), maxTools: 2, timeoutMs: 15_000 });
    const agent = createToolLessonsAgent({ app, model: new DeskModel(), tools: deskTools() });
    let turns = 0;
    const routed = async () => {
      const state = await agent.invoke(
        { messages: [human(WORDING)] },
        { configurable: { thread_id: `t-${++turns}`, user_id: "alice" } },
      );
      return state.routedTools as string[];
    };
    const before = await routed();
    expect(before[0]).not.toBe("track_parcel");
    const manager = app.manager();
    const revision = await proposeExample(app.ledger, "u:alice", "track_parcel", WORDING);
    await manager.apply(revision.id, { approvedBy: "ops", partition: "u:alice" });
    expect((await routed())[0]).toBe("track_parcel");
    await manager.undo("track_parcel", { approvedBy: "ops", partition: "u:alice" });
    expect(await routed()).toEqual(before);
  });

  it("every piece reports to the app's one sink, each under its own stage", async () => {
    const failures: ToolLessonsFailure[] = [];
    const store = new InMemoryStore();
    const app = createToolLessons({ store, tools: deskTools(), failureSink: (f) => failures.push(f) });
    // The ledger's: a corrupt row, heard once.
    await store.put([app.ledger.namespaceRoot, "p", "reviews"], "broken", { through: 42 });
    await app.ledger.reviewMarks("p");
    // The manager's: an index that cannot take the applied card is reported, not thrown.
    await app.setup({ configurable: { user_id: "alice" } });
    const manager = app.manager();
    const revision = await proposeExample(app.ledger, "u:alice", "track_parcel", WORDING);
    app.index().upsertCards = async () => {
      throw new Error("index down");
    };
    await manager.apply(revision.id, { approvedBy: "ops", partition: "u:alice" });
    // Serving's: a caller whose id is not one.
    await app.server.serve(
      { messages: [human("where is my parcel")], tools: deskTools() },
      { configurable: { thread_id: "x", user_id: "" } },
    );
    const stages = new Set(failures.map((f) => f.stage));
    expect(stages).toEqual(new Set(["ledger", "manage", "serve"]));
  });

  it("checks its options at the door with a typed error naming the option", () => {
    expect(() => createToolLessons({ maxTools: 0 })).toThrow(InvalidInput);
    expect(() => createToolLessons({ maxTools: 0 })).toThrow(/maxTools/);
    expect(() => createToolLessons({ timeoutMs: -1 })).toThrow(/timeoutMs/);
    expect(() => createToolLessons({ tools: [{ name: "" }] as never })).toThrow(/tools/);
    expect(() => createToolLessons(null as never)).toThrow(InvalidInput);
    // Infinity is a time bound that waits as long as the store takes.
    expect(createToolLessons({ timeoutMs: Number.POSITIVE_INFINITY }).timeoutMs).toBe(Number.POSITIVE_INFINITY);
  });

  it("a view given an app takes no app options of its own, and the agent's tools must be the app's", () => {
    const app = createToolLessons({ store: new InMemoryStore(), tools: deskTools() });
    expect(() => toolLessonsMiddleware({ app, maxTools: 3 })).toThrow(/maxTools.*createToolLessons/);
    expect(() => createToolLessonsAgent({ app, model: new DeskModel(), tools: deskTools(), maxTools: 3 })).toThrow(
      InvalidInput,
    );
    expect(() => createToolLessonsAgent({ app, model: new DeskModel(), tools: deskTools().slice(1) })).toThrow(
      /other tools/,
    );
    // The lessons graph is a view too.
    expect(createLessonsGraph({ app })).toBeDefined();
  });

  it("an app with no store uses each run's store, one ledger per store, and says so when asked for its own", () => {
    const app = createToolLessons();
    const a = new InMemoryStore();
    const b = new InMemoryStore();
    expect(app.ledgerFor(a)).toBe(app.ledgerFor(a));
    expect(app.ledgerFor(a)).not.toBe(app.ledgerFor(b));
    expect(app.ledgerFor(undefined)).toBeUndefined();
    expect(() => app.ledger).toThrow(InvalidInput);
  });
});
