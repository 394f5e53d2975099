import { InMemoryStore, type Operation } from "@langchain/langgraph";
import { HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import type { AppendedRecords } from "../../src/ledger/appended.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { TurnServer } from "../../src/serve/turn-server.js";
import type { ToolLessonsFailure } from "../../src/failure.js";

/** An InMemoryStore that holds every batch touching route records until `release()`, or fails them. */
class RouteGateStore extends InMemoryStore {
  held: (() => void)[] = [];
  failRoutes = false;
  routeBatches = 0;
  override async batch<Op extends readonly Operation[]>(ops: Op) {
    const routes = ops.some(
      (op) => "namespace" in op && (op.namespace as string[]).at(-1) === "routes" && "value" in op,
    );
    if (routes) {
      this.routeBatches += 1;
      if (this.failRoutes) throw new Error("store refused the write");
      await new Promise<void>((resolve) => this.held.push(resolve));
    }
    return super.batch(ops);
  }
  release(): void {
    for (const go of this.held.splice(0)) go();
  }
}

const route = (requestId: string) => ({ partition: "p", threadId: "t", requestId, offered: [], allSent: true, k: 4 });
const turn = (requestId: string) => ({
  partition: "p",
  threadId: "t",
  requestId,
  request: "[text]",
  calls: [],
});
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("route records queued off the run's path", () => {
  it("serving returns before its route record is written; the record lands on a later turn of the event loop", async () => {
    const store = new RouteGateStore();
    const ledger = new Ledger(store, { failureSink: () => undefined });
    const server = new TurnServer({ ledger, failureSink: () => undefined });
    const tools = [{ name: "lookup_order", description: "Look up an order." }];
    const served = await server.serve(
      { messages: [new HumanMessage({ content: "where is my order", id: "m1" })], tools },
      { configurable: { thread_id: "t1", user_id: "ann" }, metadata: { user_id: "ann" } },
    );
    expect(served.status).toBe("served");
    // Served, and no write of the route was even started: it waits for the next turn of the loop.
    expect(store.routeBatches).toBe(0);
    await tick();
    expect(store.routeBatches).toBe(1);
    // Held by the store: a reader through the ledger waits for it, then sees it.
    const listed = ledger.listRoutes("u:ann");
    store.release();
    const routes = await listed;
    expect(routes.map((r) => [r.requestId, r.threadId])).toEqual([[served.requestId, "t1"]]);
  });

  it("a turn appended after its route was queued is stored and told after the route, never before", async () => {
    const store = new RouteGateStore();
    const ledger = new Ledger(store, { failureSink: () => undefined });
    const heard: AppendedRecords["kind"][] = [];
    ledger.onAppended((a) => heard.push(a.kind));
    ledger.queueRoutes([route("q1")], { timeoutMs: 2000, onError: () => undefined });
    // The recorder's write of the run's turn starts at once, through the same ledger.
    const turnWritten = ledger.appendRuns([{ calls: [], turn: turn("q1") }]);
    await tick();
    expect(heard).toEqual([]);
    store.release();
    await turnWritten;
    expect(heard).toEqual(["routes", "turns"]);
    const [r] = await ledger.listRoutes("p");
    const [t] = await ledger.listTurns("p");
    // Joined by request id, and the route's id (time-ordered) comes first.
    expect(r.requestId).toBe(t.requestId);
    expect(r.id < t.id).toBe(true);
  });

  it("writes what was queued in one turn of the loop as one append, in order", async () => {
    const store = new InMemoryStore();
    const ledger = new Ledger(store, { failureSink: () => undefined });
    const told: string[][] = [];
    ledger.onAppended((a) => {
      if (a.kind === "routes") told.push(a.rows.map((r) => r.requestId));
    });
    for (const id of ["a", "b", "c"]) ledger.queueRoutes([route(id)], { timeoutMs: 2000, onError: () => undefined });
    await ledger.settleQueuedRoutes();
    expect(told).toEqual([["a", "b", "c"]]);
  });

  it("a failing write is reported through serving's sink (kind route_record) and never reaches the run", async () => {
    const store = new RouteGateStore();
    store.failRoutes = true;
    const failures: ToolLessonsFailure[] = [];
    const ledger = new Ledger(store, { failureSink: () => undefined });
    const server = new TurnServer({ ledger, failureSink: (f) => failures.push(f) });
    const tools = [{ name: "lookup_order", description: "Look up an order." }];
    const served = await server.serve(
      { messages: [new HumanMessage({ content: "where is my order", id: "m1" })], tools },
      { configurable: { thread_id: "t1", user_id: "bo" }, metadata: { user_id: "bo" } },
    );
    expect(served.status).toBe("served");
    await ledger.settleQueuedRoutes();
    expect(failures.map((f) => [f.stage, f.kind])).toEqual([["serve", "route_record"]]);
    // The turn after it writes as usual.
    await ledger.appendRuns([{ calls: [], turn: turn("q2") }]);
    expect(await ledger.listTurns("p")).toHaveLength(1);
  });

  it("a store that never answers holds the queue (and the turns behind it) at most the time bound", async () => {
    const store = new RouteGateStore();
    const ledger = new Ledger(store, { failureSink: () => undefined });
    const errors: unknown[] = [];
    ledger.queueRoutes([route("slow")], { timeoutMs: 30, onError: (e) => errors.push(e) });
    const t0 = Date.now();
    await ledger.appendRuns([{ calls: [], turn: turn("after") }]);
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(errors).toHaveLength(1);
    expect(await ledger.listTurns("p")).toHaveLength(1);
    store.release();
  });
});
