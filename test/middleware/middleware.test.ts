/**
 * toolLessonsMiddleware in a real langchain v1 `createAgent` agent: the support desk's tools, a
 * scripted model that acts only on what it is shown, a checkpointer, the recorder in callbacks,
 * several turns, threads and callers, the caller named only in v1 `context`.
 */
import { Embeddings } from "@langchain/core/embeddings";
import { HumanMessage } from "@langchain/core/messages";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it, vi } from "vitest";
import { ToolRouter } from "../../src/routing/router.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { LessonManager } from "../../src/learn/manager.js";
import { DEFAULT_PARTITION } from "../../src/ledger/keys.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { answerOf, callsOf, deskAgent, type ModelView } from "./desk-agent.js";

type Agent = ReturnType<typeof deskAgent>["agent"];

let threads = 0;

/** One user message in a thread, the caller named only in v1 `context`; the recorder flushed. */
async function ask(agent: Agent, recorder: ToolLessonsCallbackHandler, user: string, text: string, thread?: string) {
  const state = await agent.invoke(
    { messages: [new HumanMessage(text)] },
    {
      configurable: { thread_id: thread ?? `mw-thread-${++threads}` },
      context: { user_id: user },
      callbacks: [recorder],
    },
  );
  await recorder.flush();
  return { calls: callsOf(state.messages), answer: answerOf(state.messages), messages: state.messages };
}

function setup(options: { embeddings?: Embeddings; maxTools?: number; store?: InMemoryStore } = {}) {
  const ledger = new Ledger(options.store ?? new InMemoryStore());
  const index = new ToolIndex({ ledger, ...(options.embeddings ? { embeddings: options.embeddings } : {}) });
  // The router's own warnings (a skipped turn) are not the middleware's: kept apart.
  const router = new ToolRouter({ index, failureSink: () => undefined });
  const views: ModelView[] = [];
  const warnings: string[] = [];
  const { agent } = deskAgent({
    ledger,
    router,
    maxTools: options.maxTools ?? 3,
    views,
    failureSink: (failure) =>
      warnings.push(failure.error ? `${failure.message} (${failure.error.message})` : failure.message),
  });
  const recorder = new ToolLessonsCallbackHandler({
    ledger,
    failureSink: (f) => warnings.push(`${f.kind}: ${f.message}`),
  });
  return { ledger, index, router, views, warnings, agent, recorder };
}

describe("toolLessonsMiddleware in createAgent", () => {
  it("files the route record, the calls and the turn of a request in the one partition named in context", async () => {
    const { ledger, agent, recorder, warnings } = setup();
    const thread = "erin-1";
    await ask(agent, recorder, "erin", "Where is order 482913?", thread);
    await ask(agent, recorder, "erin", "Track the parcel for ORD-482913 please.", thread);
    await ask(agent, recorder, "finn", "What's the status of order 590114?");

    expect(warnings).toEqual([]);
    expect((await ledger.listPartitions()).sort()).toEqual(["u:erin", "u:finn"]);
    for (const partition of [DEFAULT_PARTITION]) {
      expect(await ledger.listRoutes(partition)).toEqual([]);
      expect(await ledger.listCalls(partition)).toEqual([]);
      expect(await ledger.listTurns(partition)).toEqual([]);
    }
    const routes = await ledger.listRoutes("u:erin");
    const turns = await ledger.listTurns("u:erin");
    const calls = await ledger.listCalls("u:erin");
    expect(routes).toHaveLength(2);
    expect(turns).toHaveLength(2);
    // Each route record joins its turn on the request id; each call belongs to one of them.
    expect(routes.map((r) => r.requestId).sort()).toEqual(turns.map((t) => t.requestId).sort());
    expect(calls.map((c) => c.tool)).toEqual(["lookup_order", "lookup_order", "track_shipment"]);
    for (const c of calls) expect(turns.map((t) => t.requestId)).toContain(c.requestId);
    expect(await ledger.listCalls("u:finn")).toHaveLength(2);
    expect(await ledger.listRoutes("u:finn")).toHaveLength(1);
  });

  it.each([
    ["configurable", (user: string) => ({ configurable: { thread_id: `cfg-${user}`, user_id: user } })],
    ["metadata", (user: string) => ({ configurable: { thread_id: `md-${user}` }, metadata: { user_id: user } })],
    ["context", (user: string) => ({ configurable: { thread_id: `ctx-${user}` }, context: { user_id: user } })],
  ] as const)("gives one partition to every record of a request with the caller only in %s", async (_where, config) => {
    const { ledger, agent, recorder, warnings } = setup();
    await agent.invoke(
      { messages: [new HumanMessage("Where is order 482913?")] },
      { ...config("gail"), callbacks: [recorder] },
    );
    await recorder.flush();
    expect(warnings).toEqual([]);
    expect(await ledger.listPartitions()).toEqual(["u:gail"]);
    const [route] = await ledger.listRoutes("u:gail");
    const [turn] = await ledger.listTurns("u:gail");
    expect(route.requestId).toBe(turn.requestId);
    expect((await ledger.listCalls("u:gail")).map((c) => c.requestId)).toEqual([turn.requestId, turn.requestId]);
  });

  it("sends every tool and records nothing for a caller whose id is refused (no partition guessed), and says so once each", async () => {
    const { ledger, agent, recorder, views, warnings } = setup();
    const thread = `mw-refused-${++threads}`;
    const turn = await ask(agent, recorder, " ", "Track the parcel for ORD-590114 please.", thread);
    await ask(agent, recorder, " ", "Where is order 482913?", thread);
    expect(turn.calls).toEqual([{ tool: "track_shipment", ok: true }]);
    expect(views[0].tools).toHaveLength(8);
    // The middleware's warning (why the ids were refused), then the recorder's (nothing written).
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/partition ids were refused/);
    expect(warnings[0]).toMatch(/blank string/);
    expect(warnings[1]).toMatch(/records were not written/);
    for (const p of [DEFAULT_PARTITION, ...(await ledger.listPartitions())]) {
      expect(await ledger.listRoutes(p)).toEqual([]);
      expect(await ledger.listCalls(p)).toEqual([]);
      expect(await ledger.listTurns(p)).toEqual([]);
    }
  });

  it("narrows every model call of a request to the routed tools, sent as the registered instances", async () => {
    const { agent, recorder, views } = setup({ maxTools: 3 });
    const turn = await ask(agent, recorder, "erin", "Please refund $18.50 on ORD-771204, the mug arrived broken.");
    expect(turn.calls[0]).toEqual({ tool: "refund_order", ok: false });
    expect(views.length).toBeGreaterThanOrEqual(2);
    for (const view of views) {
      expect(view.tools.length).toBe(3);
      expect(view.tools.map((t) => t.name)).toContain("refund_order");
      // Nothing learned yet: the agent's own tool objects, untouched.
      expect(view.instances).toEqual([true, true, true]);
    }
    // Every model call of the request saw the same tools.
    expect(new Set(views.map((v) => v.tools.map((t) => t.name).join()))).toHaveProperty("size", 1);
  });

  it("keeps a tool the thread already uses on a later turn of the thread", async () => {
    const { agent, recorder, views } = setup({ maxTools: 1 });
    await ask(agent, recorder, "erin", "Where is order 482913?", "sticky");
    views.length = 0;
    await ask(agent, recorder, "erin", "How do I download my invoices?", "sticky");
    expect(views[0].tools.map((t) => t.name)).toContain("lookup_order");
    expect(views[0].tools.length).toBe(2);
  });

  it("shows the tool's learned lines to the model after a lesson is applied, so the call succeeds first time, in that partition only", async () => {
    const { ledger, index, agent, recorder, views } = setup({ maxTools: 3 });
    const before = await ask(agent, recorder, "erin", "Where is order 482913?");
    await ask(agent, recorder, "erin", "Can you check on order 771204 for me?");
    expect(before.calls).toEqual([
      { tool: "lookup_order", ok: false },
      { tool: "lookup_order", ok: true },
    ]);
    const manager = new LessonManager({ ledger, index });
    const review = await manager.review({ partition: "u:erin" });
    const lesson = review.revisions.find((r) => r.tool === "lookup_order");
    expect(lesson).toBeDefined();
    await manager.apply(lesson!.id, { partition: "u:erin", approvedBy: "test" });

    views.length = 0;
    const after = await ask(agent, recorder, "erin", "Where is order 319870?");
    expect(after.calls).toEqual([{ tool: "lookup_order", ok: true }]);
    const shown = views[0].tools.find((t) => t.name === "lookup_order")!;
    expect(shown.description).toMatch(/^Look up an order: its status, items and total\.\n\nLearned from use:\n- /);
    expect(shown.description).toContain("ORD-######");
    // Sent as a plain definition (createAgent refuses a changed tool instance), run as the registered tool.
    expect(views[0].instances[views[0].tools.indexOf(shown)]).toBe(false);

    views.length = 0;
    const other = await ask(agent, recorder, "finn", "Where is order 590114?");
    expect(views[0].tools.find((t) => t.name === "lookup_order")!.description).toBe(
      "Look up an order: its status, items and total.",
    );
    expect(other.calls[0]).toEqual({ tool: "lookup_order", ok: false });
  });

  it("captures an edict from the user's turn, pins it to the system message, and the model obeys it next turn; other callers are not bound", async () => {
    const { ledger, agent, recorder, views } = setup({ maxTools: 3 });
    const thread = "edict";
    await ask(agent, recorder, "erin", "Thanks for the help. Never email Dana.", thread);
    const [rule] = await ledger.listRules("u:erin");
    expect(rule).toMatchObject({ tool: "send_email", priority: "critical", rule: "Never email Dana." });

    views.length = 0;
    const next = await ask(
      agent,
      recorder,
      "erin",
      "Send dana.whitfield@northwind.test an email that her refund went through.",
      thread,
    );
    expect(next.calls).toEqual([]);
    expect(next.answer).toMatch(/^I won't email dana: a pinned rule says "Never email Dana\."/);
    expect(views[0].system).toContain("## Tool-scoped rules");
    expect(views[0].system).toContain("- [critical] Never email Dana.");

    views.length = 0;
    const bob = await ask(
      agent,
      recorder,
      "finn",
      "Send dana.whitfield@northwind.test an email that her refund went through.",
    );
    expect(bob.calls).toEqual([{ tool: "send_email", ok: true }]);
    expect(views[0].system).toBe("");
  });

  it("shows a routed tool's guideline from its memory in the system message before the tool is used", async () => {
    const { ledger, index, agent, recorder, views } = setup({ maxTools: 3 });
    for (const id of ["482913", "771204", "660981"]) await ask(agent, recorder, "erin", `Where is order ORD-${id}?`);
    const manager = new LessonManager({ ledger, index });
    const summary = await manager.summarize(["lookup_order"], {
      partition: "u:erin",
      config: { minEvaluatedCalls: 2 },
    });
    expect(summary.tools[0], JSON.stringify(summary.tools[0])).toMatchObject({ status: "summarized" });

    views.length = 0;
    await ask(agent, recorder, "erin", "Where is order ORD-319870?");
    expect(views[0].system).toContain("Guidelines from past use of these tools:");
    expect(views[0].system).toMatch(
      /Guideline for lookup_order \(from its \d+ most recent evaluated calls?\):\nWhat it is for: /,
    );
    views.length = 0;
    await ask(agent, recorder, "finn", "Where is order ORD-319870?");
    expect(views[0].system).toBe("");
  });

  it("goes on with every tool when the embeddings throw, says so once, and records that no routing choice was made", async () => {
    class Failing extends Embeddings {
      constructor() {
        super({});
      }
      async embedDocuments(): Promise<number[][]> {
        throw new Error("embeddings service 503");
      }
      async embedQuery(): Promise<number[]> {
        throw new Error("embeddings service 503");
      }
    }
    const { ledger, agent, recorder, views, warnings } = setup({ embeddings: new Failing() });
    const first = await ask(agent, recorder, "erin", "Track the parcel for ORD-590114 please.");
    const second = await ask(agent, recorder, "erin", "Where is order ORD-482913?");
    expect(first.calls).toEqual([{ tool: "track_shipment", ok: true }]);
    expect(second.calls).toEqual([{ tool: "lookup_order", ok: true }]);
    for (const view of views) expect(view.tools).toHaveLength(8);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/routing failed: the request got every tool/);
    const routes = await ledger.listRoutes("u:erin");
    expect(routes.map((r) => ({ offered: r.offered, allSent: r.allSent, skipped: r.skipped }))).toEqual([
      { offered: [], allSent: true, skipped: "embeddings_failed" },
      { offered: [], allSent: true, skipped: "embeddings_failed" },
    ]);
    expect(await ledger.listCalls("u:erin")).toHaveLength(2);
  });

  it("goes on with the authors' descriptions and every tool when the ledger's store throws", async () => {
    const store = new InMemoryStore();
    const { agent, recorder, views, warnings } = setup({ store });
    store.batch = async () => {
      throw new Error("store unreachable");
    };
    const turn = await ask(agent, recorder, "erin", "Track the parcel for ORD-590114 please.");
    expect(turn.calls).toEqual([{ tool: "track_shipment", ok: true }]);
    expect(views[0].tools.map((t) => t.description)).toContain("Track the parcel of a shipped order with the carrier.");
    expect(warnings.some((w) => /routing failed/.test(w))).toBe(true);
    expect(warnings.some((w) => /store unreachable/.test(w) && !/ORD-590114/.test(w))).toBe(true);
  });

  it("uses the agent's own store as the ledger when given none", async () => {
    const store = new InMemoryStore();
    const views: ModelView[] = [];
    const { agent } = deskAgent({ store, views, maxTools: 2, failureSink: (failure) => expect.fail(failure.message) });
    const ledger = new Ledger(store);
    const recorder = new ToolLessonsCallbackHandler({ ledger });
    const turn = await ask(agent, recorder, "erin", "Where is order ORD-482913?");
    expect(turn.calls).toEqual([{ tool: "lookup_order", ok: true }]);
    expect(views[0].tools).toHaveLength(2);
    // Another ledger over the store: it reads what the middleware's own ledger wrote there, once written
    // (route records are written off the run's path, on a later turn of the event loop).
    await vi.waitFor(async () => expect(await ledger.listRoutes("u:erin")).toHaveLength(1));
    expect((await ledger.listCards("u:erin")).map((c) => c.name)).toContain("lookup_order");
  });
});
