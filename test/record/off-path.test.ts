import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { type BaseStore, InMemoryStore, type Operation, type OperationResults } from "@langchain/langgraph";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { echoTwiceAgent } from "../helpers/record-agent.js";

/**
 * Recording is off the run's path: a callback only queues the finished run; masking, building
 * the rows and writing them start on a later turn of the event loop, and the run never awaits
 * them. `flush()` still waits for all of it. What ordering remains is checked here too.
 */

/** Every write the store is asked for, in order; writes can be held until released. */
class GateStore extends InMemoryStore {
  held = false;
  /** One entry per put: its collection (third namespace label) and its row. */
  readonly puts: { collection: string; value: Record<string, unknown> }[] = [];
  batches = 0;
  private waiting: (() => void)[] = [];

  override async batch<Op extends readonly Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const writes = operations.filter((op) => "value" in op);
    if (writes.length > 0) {
      this.batches += 1;
      if (this.held) await new Promise<void>((resolve) => this.waiting.push(resolve));
      for (const op of writes) {
        const put = op as { namespace: string[]; value: Record<string, unknown> | null };
        if (put.value) this.puts.push({ collection: put.namespace[2] ?? "", value: put.value });
      }
    }
    return super.batch(operations);
  }

  release(): void {
    this.held = false;
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

async function setup() {
  const store = new GateStore();
  const ledger = new Ledger(store, { failureSink: () => undefined });
  await ledger.fingerprintKey("default");
  store.batches = 0;
  store.puts.length = 0;
  const handler = new ToolLessonsCallbackHandler({ ledger, singleTenant: true, failureSink: () => undefined });
  return { store, ledger, handler };
}

const serialized = { lc: 1, type: "not_implemented" as const, id: ["tool"] };

/** One run of two calls, driven through the callbacks as LangChain calls them; returns what each returned. */
function driveRun(handler: ToolLessonsCallbackHandler, r: number): unknown[] {
  const metadata = { thread_id: `t${r}` };
  const human = new HumanMessage({ content: `refund ORD-4471${r}0 for sam@example.com`, id: `h${r}` });
  const calls = [0, 1].map((i) => ({
    id: `c${r}-${i}`,
    name: "lookup_order",
    args: { order_id: `ORD-4471${r}${i}` },
    type: "tool_call" as const,
  }));
  const ai = new AIMessage({ content: "", tool_calls: calls });
  const root = `root-${r}`;
  const node = `node-${r}`;
  const returned: unknown[] = [];
  returned.push(handler.handleChainStart(serialized, { messages: [human] }, root, undefined, [], metadata));
  returned.push(handler.handleChainStart(serialized, { messages: [human] }, node, root, [], metadata));
  returned.push(handler.handleLLMEnd({ generations: [[{ text: "", message: ai } as never]] }, `llm-${r}`, node));
  const outputs = calls.map((c, i) => {
    const run = `tool-${r}-${i}`;
    returned.push(handler.handleToolStart(serialized, JSON.stringify(c.args), run, node, [], metadata, c.name, c.id));
    const out = new ToolMessage({ content: `order ${c.args.order_id} shipped`, tool_call_id: c.id, status: "success" });
    returned.push(handler.handleToolEnd(out, run));
    return out;
  });
  returned.push(handler.handleChainEnd({ messages: outputs }, node, root));
  returned.push(handler.handleChainEnd({ messages: [human, ai, ...outputs] }, root));
  return returned;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
async function microtasks(n = 50): Promise<void> {
  for (let i = 0; i < n; i += 1) await Promise.resolve();
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the callback returns before the write", () => {
  it("callbacks return at once; nothing is masked or written until the event loop turns", async () => {
    const { store, handler } = await setup();
    const returned = driveRun(handler, 1);
    // Every callback returned synchronously: the run had nothing to await.
    expect(returned.every((r) => r === undefined)).toBe(true);
    // The run's records are queued, raw; however many microtasks the run goes on for, no write starts.
    await microtasks();
    expect(handler.stats()).toMatchObject({ buffered: 3, inFlight: 0, written: { calls: 0, turns: 0 } });
    expect(store.batches).toBe(0);
    // On the next turn of the loop the writer masks, builds and writes them.
    await nextTurn();
    await vi.waitFor(() => expect(handler.stats().written).toEqual({ calls: 2, turns: 1 }));
  });

  it("a real graph's invoke resolves while the store holds the write; flush() waits for it", async () => {
    const { store, ledger, handler } = await setup();
    store.held = true;
    const graph = echoTwiceAgent();
    await graph.invoke(
      { messages: [new HumanMessage("go")] },
      { configurable: { thread_id: "t" }, callbacks: [handler] },
    );
    // invoke resolved; the write has not been answered.
    await nextTurn();
    await vi.waitFor(() => expect(store.batches).toBe(1));
    expect(handler.stats()).toMatchObject({ written: { calls: 0, turns: 0 } });
    expect(handler.stats().buffered + handler.stats().inFlight).toBe(3);
    let flushed = false;
    const flushing = handler.flush().then((result) => {
      flushed = true;
      return result;
    });
    await nextTurn();
    await microtasks();
    expect(flushed).toBe(false);
    store.release();
    expect(await flushing).toMatchObject({ written: 3, inFlight: 0, lost: 0, timedOut: false });
    expect(await ledger.listCalls("default")).toHaveLength(2);
    expect(await ledger.listTurns("default")).toHaveLength(1);
  });

  it("flush() right after the callbacks masks and writes what they queued", async () => {
    const { ledger, handler } = await setup();
    driveRun(handler, 2);
    expect(await handler.flush()).toMatchObject({ written: 3, inFlight: 0, lost: 0 });
    const calls = await ledger.listCalls("default");
    expect(calls.map((c) => c.args[0]?.shape)).toEqual(["ORD-######", "ORD-######"]);
    const [turn] = await ledger.listTurns("default");
    expect(turn.request).toBe("refund <value> for <email>");
  });
});

describe("ordering that remains", () => {
  it("a turn row is written after its calls and names them; calls and turn share the request id", async () => {
    const { store, handler } = await setup();
    // Runs ending in every order, some while a write is out.
    store.held = true;
    for (const r of [3, 1, 4]) driveRun(handler, r);
    await nextTurn();
    for (const r of [5, 9, 2]) driveRun(handler, r);
    store.release();
    expect(await handler.flush()).toMatchObject({ written: 18, inFlight: 0, lost: 0 });
    const turns = store.puts.filter((p) => p.collection === "turns");
    expect(turns).toHaveLength(6);
    for (const turn of turns) {
      const at = store.puts.indexOf(turn);
      const calls = store.puts.filter((p) => p.collection === "calls" && p.value.requestId === turn.value.requestId);
      expect(calls).toHaveLength(2);
      for (const call of calls) expect(store.puts.indexOf(call)).toBeLessThan(at);
      expect(turn.value.calls).toEqual(calls.map((c) => ({ tool: c.value.tool, outcome: c.value.outcome })));
      expect(new Set(calls.map((c) => c.value.runId)).size).toBe(1);
    }
  });
});

describe("the fingerprint key is ready without a timer", () => {
  /** A store with no compare-and-set that no in-process lock covers (once the candidate protocol). */
  function plainStore(): BaseStore {
    const inner = new InMemoryStore();
    return new Proxy(inner, {
      getPrototypeOf: () => Object.prototype,
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as BaseStore;
  }

  it("a fresh in-memory ledger's first run is written with no timer firing", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
    const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
    const handler = new ToolLessonsCallbackHandler({ ledger, singleTenant: true, failureSink: () => undefined });
    driveRun(handler, 6);
    // flush()'s own deadline is a (fake) timer that never fires: only the writes can end it.
    expect(await handler.flush({ timeoutMs: 1000 })).toMatchObject({ written: 3, timedOut: false });
    // No timer is left waiting: the key needed none.
    expect(vi.getTimerCount()).toBe(0);
  });

  it("ledgers racing on a fresh store agree on one key, none waiting for a timer", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
    const store = new InMemoryStore();
    const keys = await Promise.all(Array.from({ length: 5 }, () => new Ledger(store).fingerprintKey("default")));
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a store without compare-and-set needs no wait either: its key is the app's secret", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
    const secret = { secret: "the-app-secret-of-this-test" };
    const [a, b] = await Promise.all([
      new Ledger(plainStore(), secret).fingerprintKey("default"),
      new Ledger(plainStore(), secret).fingerprintKey("default"),
    ]);
    expect(a).toBe(b);
    expect(vi.getTimerCount()).toBe(0);
  });
});
