/**
 * A store that never answers never hangs the user's run: every turn of `createToolLessonsAgent`
 * and of `createAgent` + `toolLessonsMiddleware` finishes within the time bound (per stage) plus
 * the model's time, with every tool and no lessons, and the one sink hears each kind of failure
 * once.
 */
import { HumanMessage } from "@langchain/core/messages";
import { InMemoryStore, MemorySaver, type Operation } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { createToolLessonsAgent } from "../../src/graph/agent.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { callsOfTurn, DeskModel, deskTools } from "../graph/desk.js";
import { callsOf, deskAgent, type ModelView } from "../middleware/desk-agent.js";

/** An in-memory store that, once `hanging`, answers no batch at all (a promise that never settles). */
class HangingStore extends InMemoryStore {
  hanging = false;
  pending = 0;
  override async batch<Op extends readonly Operation[]>(operations: Op): Promise<never> {
    if (this.hanging) {
      this.pending += 1;
      return new Promise<never>(() => undefined);
    }
    return (await super.batch(operations)) as never;
  }
}

const BOUND_MS = 150;
/** What a turn may take on this loaded machine besides the bounds (the scripted model is instant). */
const SLACK_MS = 1_500;

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await work();
  return { value, ms: performance.now() - t0 };
}

describe("createToolLessonsAgent over a store that never answers", () => {
  for (const when of ["from the start", "after a first turn registered the tools"] as const) {
    it(`finishes every turn within the bounds, with every tool, and the sink hears each kind once (${when})`, async () => {
      const store = new HangingStore();
      const tools = deskTools();
      const failures: ToolLessonsFailure[] = [];
      const model = new DeskModel();
      const agent = createToolLessonsAgent({
        model,
        tools,
        store,
        checkpointer: new MemorySaver(),
        maxTools: 2,
        timeoutMs: BOUND_MS,
        failureSink: (failure) => failures.push(failure),
      });
      const config = { configurable: { thread_id: `hang-${when}`, user_id: "ann" } };
      if (when === "after a first turn registered the tools") {
        await agent.invoke({ messages: [new HumanMessage("Where is order ORD-100000?")] }, config);
        await agent.recorder.flush();
      }
      store.hanging = true;
      model.seen.length = 0;
      // The first turn fails a call (no ORD- prefix), so the second has a signal: the learning nodes run too.
      for (const text of ["Where is order 482913?", "Where is order 771204?", "Where is order ORD-319870?"]) {
        const turn = await timed(() => agent.invoke({ messages: [new HumanMessage(text)] }, config));
        // Serving (one bound) and, on a turn with a signal, learning (one bound) before the model.
        expect(turn.ms).toBeLessThan(2 * BOUND_MS + SLACK_MS);
        expect(callsOfTurn(turn.value.messages).at(-1)).toEqual({ tool: "lookup_order", ok: true });
        expect(turn.value.lessonsPrompt).toBe("");
      }
      // From the start, routing never answered: every tool was bound. After a first turn, the index
      // in memory still routes: what was already there is used.
      if (when === "from the start") expect(model.seen.every((s) => s.tools.length === tools.length)).toBe(true);
      expect(store.pending).toBeGreaterThan(0);
      const kinds = failures.map((f) => `${f.stage}:${f.kind}`);
      expect(new Set(kinds).size).toBe(kinds.length);
      expect(kinds.some((k) => k.startsWith("serve:") && k.endsWith("_timeout"))).toBe(true);
      for (const f of failures) expect(JSON.stringify(f)).not.toMatch(/482913|771204|319870/);
      // The recorder's flush is bounded too: it reports what is still in flight instead of waiting.
      const flushed = await timed(() => agent.recorder.flush({ timeoutMs: BOUND_MS }));
      expect(flushed.ms).toBeLessThan(BOUND_MS + SLACK_MS);
    });
  }
});

describe("createAgent + toolLessonsMiddleware over a store that never answers", () => {
  for (const when of ["from the start", "after a first turn registered the tools"] as const) {
    it(`finishes every model call within the bound, with every tool (${when})`, async () => {
      const store = new HangingStore();
      const views: ModelView[] = [];
      const failures: ToolLessonsFailure[] = [];
      const { agent, tools } = deskAgent({
        store,
        views,
        maxTools: 2,
        timeoutMs: BOUND_MS,
        failureSink: (failure) => failures.push(failure),
      });
      const recorder = new ToolLessonsCallbackHandler({ ledger: new Ledger(store), failureSink: () => undefined });
      if (when === "after a first turn registered the tools") {
        await agent.invoke(
          { messages: [new HumanMessage("Where is order ORD-100000?")] },
          { configurable: { thread_id: `mw-hang-first` }, context: { user_id: "erin" }, callbacks: [recorder] },
        );
        await recorder.flush();
        views.length = 0;
      }
      store.hanging = true;
      for (const [i, text] of ["Track the parcel for ORD-590114 please.", "Where is order ORD-482913?"].entries()) {
        const turn = await timed(() =>
          agent.invoke(
            { messages: [new HumanMessage(text)] },
            {
              configurable: { thread_id: `mw-hang-${when}-${i}` },
              context: { user_id: "erin" },
              callbacks: [recorder],
            },
          ),
        );
        expect(turn.ms).toBeLessThan(BOUND_MS + SLACK_MS);
        expect(callsOf(turn.value.messages)).toHaveLength(1);
      }
      if (when === "from the start") for (const view of views) expect(view.tools).toHaveLength(tools.length);
      // No lessons block reached the model: the reads never answered.
      for (const view of views) expect(view.system).not.toMatch(/Tool-scoped rules|Guidelines/);
      const kinds = failures.map((f) => f.kind);
      expect(new Set(kinds).size).toBe(kinds.length);
      expect(failures.every((f) => f.stage === "serve")).toBe(true);
      expect(kinds.some((k) => k.endsWith("_timeout"))).toBe(true);
    });
  }
});
