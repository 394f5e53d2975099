import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SimpleChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import { type BaseStore, InMemoryStore } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { RevisionConflict } from "../../src/errors.js";
import { compareAndSet, localCompareAndSet } from "../../src/ledger/cas.js";
import { timeOrderedId } from "../../src/ledger/keys.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { storeReview } from "../../src/learn/review/store.js";
import { ModelEvaluator } from "../../src/memory/model-evaluator.js";
import type { Revision } from "../../src/ledger/schema.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";
import { managerOver, P, seedFailures, seedProposed, seedTool, TOOL } from "../helpers/cas-world.js";

/**
 * Races settled by the store, in one process: two "operators" (two ledgers and managers) over
 * one InMemoryStore (settled by the in-process lock), and over two connections to one SQLite
 * file (settled by the store's transaction). Each racing call is held at `Ledger.commit` until
 * the other has reached it too, so both have passed every read-then-check before either
 * writes: what decides is the store's compare-and-set.
 */

let dir: string | undefined;
const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const BACKENDS: [string, () => Promise<[BaseStore, BaseStore]>][] = [
  [
    "InMemoryStore (one store, in-process lock)",
    async () => {
      const store = new InMemoryStore();
      return [store, store];
    },
  ],
  [
    "SqliteStore (two connections to one file)",
    async () => {
      dir = mkdtempSync(join(tmpdir(), "cas-"));
      const a = await SqliteStore.open(join(dir, "ledger.db"));
      const b = await SqliteStore.open(join(dir, "ledger.db"));
      stores.push(a, b);
      return [a, b];
    },
  ],
];

/** Hold the first commit of each ledger until all of them have reached it. */
function gateCommits(ledgers: readonly Ledger[]): void {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  for (const ledger of ledgers) {
    const commit = ledger.commit.bind(ledger);
    ledger.commit = async (partition, change) => {
      arrived += 1;
      if (arrived >= ledgers.length) open();
      await opened;
      return commit(partition, change);
    };
  }
}

/** Exactly one fulfilled and one RevisionConflict; the conflict comes from the store (`meanwhile`). */
function oneWinner<T>(results: PromiseSettledResult<T>[]): { value: T; index: number; conflict: RevisionConflict } {
  const won = results.flatMap((r, i) => (r.status === "fulfilled" ? [{ value: r.value, index: i }] : []));
  const lost = results.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
  expect(won).toHaveLength(1);
  expect(lost).toHaveLength(1);
  expect(lost[0]).toBeInstanceOf(RevisionConflict);
  const conflict = lost[0] as RevisionConflict;
  expect(conflict.message).toMatch(/meanwhile/);
  return { ...won[0], conflict };
}

describe.each(BACKENDS)("races on %s", (_name, open) => {
  async function twoOperators() {
    const [sa, sb] = await open();
    const a = new Ledger(sa, { failureSink: () => undefined });
    const b = new Ledger(sb, { failureSink: () => undefined });
    await seedTool(a);
    return { a, b, ma: managerOver(a), mb: managerOver(b) };
  }

  it("two applies of one revision: one wins, the other gets RevisionConflict naming the winner and writes nothing", async () => {
    const { a, b, ma, mb } = await twoOperators();
    const revision = await seedProposed(a);
    gateCommits([a, b]);
    const results = await Promise.allSettled([
      ma.apply(revision.id, { approvedBy: "alice" }),
      mb.apply(revision.id, { approvedBy: "bob" }),
    ]);
    const { value, conflict } = oneWinner(results);
    const winner = value.approvedBy;
    expect(["alice", "bob"]).toContain(winner);
    expect(conflict.winner).toBe(winner);
    expect(conflict.message).toContain(`applied by ${winner}`);
    const stored = await a.requireRevision(P, revision.id);
    expect(stored).toMatchObject({ status: "applied", approvedBy: winner });
    const card = await b.getCard(P, TOOL);
    expect(card?.version).toBe(2);
    expect(card?.learned.notes).toEqual([{ text: revision.notesAdded[0], revisionId: revision.id }]);
  });

  it("apply racing dismiss: one wins, and the revision and the card agree with it", async () => {
    const { a, b, ma, mb } = await twoOperators();
    const revision = await seedProposed(a);
    gateCommits([a, b]);
    const results = await Promise.allSettled([
      ma.apply(revision.id, { approvedBy: "alice" }),
      mb.dismiss(revision.id, { by: "bob" }),
    ]);
    const { value, index, conflict } = oneWinner<Revision>(results);
    const stored = await a.requireRevision(P, revision.id);
    const card = await a.getCard(P, TOOL);
    if (index === 0) {
      expect(value.status).toBe("applied");
      expect(conflict.winner).toBe("alice");
      expect(stored.status).toBe("applied");
      expect(card?.version).toBe(2);
      expect(card?.learned.notes).toHaveLength(1);
    } else {
      expect(value.status).toBe("dismissed");
      expect(conflict.winner).toBe("bob");
      expect(stored).toMatchObject({ status: "dismissed", closedBy: "bob" });
      expect(card?.version).toBe(1);
      expect(card?.learned.notes).toEqual([]);
    }
  });

  it("two undos: one wins, the card goes back once", async () => {
    const { a, b, ma, mb } = await twoOperators();
    const revision = await seedProposed(a);
    await ma.apply(revision.id, { approvedBy: "alice" });
    gateCommits([a, b]);
    const results = await Promise.allSettled([
      ma.undo(TOOL, { approvedBy: "carol" }),
      mb.undo(TOOL, { approvedBy: "dave" }),
    ]);
    const { value, conflict } = oneWinner(results);
    expect(conflict.winner).toBe(value.closedBy);
    expect(await a.requireRevision(P, revision.id)).toMatchObject({ status: "undone", closedBy: value.closedBy });
    const card = await b.getCard(P, TOOL);
    expect(card?.version).toBe(3);
    expect(card?.learned.notes).toEqual([]);
  });

  it("two reviews at once store one revision of a tool", async () => {
    const { a, b, ma, mb } = await twoOperators();
    await seedFailures(a, 3);
    gateCommits([a, b]);
    const [ra, rb] = await Promise.all([ma.review(), mb.review()]);
    expect(ra.revisions.length + rb.revisions.length).toBe(1);
    const stored = await a.listRevisions(P, { tool: TOOL });
    expect(stored).toHaveLength(1);
    expect([...ra.revisions, ...rb.revisions][0].id).toBe(stored[0].id);
  });

  it("a card write that read a version another writer moved past writes nothing", async () => {
    const { a, b } = await twoOperators();
    const card = await a.getCard(P, TOOL);
    if (!card) throw new Error("no card");
    gateCommits([a, b]);
    const results = await Promise.allSettled([
      a.putCard({ ...card, learned: { ...card.learned, notes: [{ text: "from a", revisionId: "ra" }] } }),
      b.putCard({ ...card, learned: { ...card.learned, notes: [{ text: "from b", revisionId: "rb" }] } }),
    ]);
    const { value } = oneWinner(results);
    const stored = await a.getCard(P, TOOL);
    expect(stored?.version).toBe(2);
    expect(stored?.learned.notes).toEqual(value.learned.notes);
  });
});

describe("storeReview claims", () => {
  it("stores a revision only while the newest revision of its tool is the one the review saw", async () => {
    const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
    await seedTool(ledger);
    const first = await seedProposed(ledger, "first");
    const draft = (note: string): Revision => ({ ...first, id: timeOrderedId(), notesAdded: [note] });
    const second = draft("second");
    expect(await storeReview(ledger, P, [second], new Map(), [first])).toEqual([second]);
    // A review that saw only `first` (it read before `second` was stored) stores nothing for the tool.
    const stale = draft("stale");
    expect(await storeReview(ledger, P, [stale], new Map(), [first])).toEqual([]);
    expect(await storeReview(ledger, P, [draft("blind")], new Map(), [])).toEqual([]);
    // One that saw `second` goes ahead.
    const third = draft("third");
    expect(await storeReview(ledger, P, [third], new Map(), [first, second])).toEqual([third]);
    expect((await ledger.listRevisions(P)).map((r) => r.notesAdded[0])).toEqual(["third", "second", "first"]);
  });
});

describe("compare-and-set in one process (InMemoryStore)", () => {
  it("of twenty writers that read version 0, exactly one writes", async () => {
    const store = new InMemoryStore();
    const ns = ["cas", "test"];
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        localCompareAndSet(
          store,
          [{ namespace: ns, key: "row", field: "version", oneOf: [null] }],
          [{ namespace: ns, key: "row", value: { version: 1, writer: i } }],
        ),
      ),
    );
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
    const winner = outcomes.findIndex((o) => o.ok);
    expect((await store.get(ns, "row"))?.value).toEqual({ version: 1, writer: winner });
    for (const o of outcomes) if (!o.ok) expect(o.failed[0].item?.value).toEqual({ version: 1, writer: winner });
  });

  it("writes nothing when one of several checks fails, and reports every failed check", async () => {
    const store = new InMemoryStore();
    await store.put(["c"], "a", { status: "applied" });
    const outcome = await compareAndSet(
      store,
      [
        { namespace: ["c"], key: "a", field: "status", oneOf: ["proposed"] },
        { namespace: ["c"], key: "b", field: "status", oneOf: [null] },
        { namespace: ["c"], key: "z", field: "status", oneOf: ["proposed"] },
      ],
      [{ namespace: ["c"], key: "b", value: { status: "proposed" } }],
    );
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.failed.map((f) => f.check)).toEqual([0, 2]);
    expect(await store.get(["c"], "b")).toBeNull();
  });

  it("keeps serving after a write throws", async () => {
    const store = new InMemoryStore();
    const bad = localCompareAndSet(store, [], [{ namespace: [], key: "x", value: { a: 1 } }]);
    await expect(bad).rejects.toThrow();
    const ok = await localCompareAndSet(store, [], [{ namespace: ["c"], key: "x", value: { a: 1 } }]);
    expect(ok.ok).toBe(true);
  });
});

/**
 * A chat model with no tool calling whose reply (or failure) a script decides from the prompt's
 * evidence; counts its calls. Honours the call's abort signal, as a provider client does.
 */
class ScriptedModel extends SimpleChatModel {
  calls = 0;
  constructor(private readonly script: (failedCallIds: string[]) => Promise<string>) {
    super({});
  }
  _llmType(): string {
    return "scripted";
  }
  async _call(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<string> {
    this.calls += 1;
    const prompt = messages[messages.length - 1].text;
    const evidence = JSON.parse(prompt.slice(prompt.indexOf("{"))) as { failedCalls: { callIds: string[] }[] };
    const reply = this.script(evidence.failedCalls.flatMap((f) => f.callIds));
    const signal = options.signal;
    if (!signal) return reply;
    return Promise.race([
      reply,
      new Promise<string>((_, reject) => {
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      }),
    ]);
  }
}

/** A usable reply: one note citing the failed calls. */
const goodReply = async (cites: string[]): Promise<string> =>
  JSON.stringify({ notes: [{ text: "order_id needs its ORD- prefix.", cites }], examples: [], notFor: [] });

describe("a review whose model fails", () => {
  async function failingWorld(fail: (cites: string[]) => Promise<string>) {
    const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
    await seedTool(ledger);
    await seedFailures(ledger, 3);
    const model = new ScriptedModel(fail);
    return { ledger, model, manager: managerOver(ledger, { model }) };
  }

  it.each([
    [
      "errors",
      async () => {
        throw new Error("503 Service Unavailable");
      },
      "model_error",
    ],
    ["returns text that is no JSON", async () => "Sure! Add a note about the prefix.", "reply_not_json"],
    ["returns JSON of the wrong shape", async () => JSON.stringify({ notes: "prefix" }), "reply_wrong_shape"],
  ])("%s: writes nothing, and the next review asks again", async (_what, reply, reason) => {
    let broken = true;
    const w = await failingWorld(async (cites) => (broken ? reply() : goodReply(cites)));
    const failed = await w.manager.review();
    expect(failed.revisions).toEqual([]);
    expect(failed.refused.map((r) => r.refusal.reason)).toEqual([reason]);
    expect(await w.ledger.listRevisions(P)).toEqual([]);
    expect(await w.ledger.reviewMarks(P)).toEqual(new Map());
    expect((await w.ledger.getCard(P, TOOL))?.version).toBe(1);

    broken = false;
    const again = await w.manager.review();
    expect(w.model.calls).toBe(2);
    expect(again.revisions).toHaveLength(1);
    expect(await w.ledger.listRevisions(P)).toHaveLength(1);
  });

  it("times out (the run's signal): the review fails, writes nothing, and the next review asks again", async () => {
    let hang = true;
    const w = await failingWorld(async (cites) => (hang ? new Promise<string>(() => undefined) : goodReply(cites)));
    await expect(w.manager.review({}, { signal: AbortSignal.timeout(200) })).rejects.toThrow();
    expect(await w.ledger.listRevisions(P)).toEqual([]);
    expect(await w.ledger.reviewMarks(P)).toEqual(new Map());
    hang = false;
    const again = await w.manager.review();
    expect(w.model.calls).toBe(2);
    expect(again.revisions).toHaveLength(1);
  });
});

describe("an evaluation pass whose model fails", () => {
  /** An evaluator model: broken in one way, or answering a usable evaluation. */
  class JudgeModel extends SimpleChatModel {
    mode: "error" | "garbage" | "hang" | "good" = "good";
    calls = 0;
    _llmType(): string {
      return "scripted-judge";
    }
    async _call(): Promise<string> {
      this.calls += 1;
      if (this.mode === "error") throw new Error("503 Service Unavailable");
      if (this.mode === "garbage") return "I think this call went fine!";
      if (this.mode === "hang") return new Promise<string>(() => undefined);
      return JSON.stringify({
        summary: "The lookup was refused by validation.",
        evaluation: "It failed.",
        score: 0,
        issues: [],
      });
    }
  }

  it.each(["error", "garbage", "hang"] as const)(
    "a model that answers with %s: no evaluated call is written, and the next pass evaluates them",
    async (mode) => {
      const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
      await seedTool(ledger);
      await seedFailures(ledger, 3);
      const judge = new JudgeModel({});
      judge.mode = mode;
      const manager = managerOver(ledger, {
        memory: { evaluator: new ModelEvaluator(judge, { timeoutMs: 100, maxRetries: 0 }) },
      });
      const failed = await manager.evaluateCalls();
      const [tool] = failed.tools;
      expect(tool.evaluated).toBe(0);
      expect(tool.unevaluated.length).toBeGreaterThan(0);
      expect(await ledger.listEvaluatedCalls(P, TOOL)).toEqual([]);
      expect((await ledger.getToolMemory(P, TOOL))?.evaluatedThrough).toBeUndefined();

      judge.mode = "good";
      const again = await manager.evaluateCalls();
      expect(again.tools.map((t) => [t.evaluated, t.unevaluated.length])).toEqual([[tool.unevaluated.length, 0]]);
      expect((await ledger.listEvaluatedCalls(P, TOOL)).map((c) => c.id)).toEqual(
        tool.unevaluated.map((u) => u.callId),
      );
    },
  );
});
