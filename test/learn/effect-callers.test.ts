import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { judgeTarget, MIN_EFFECT_CALLERS } from "../../src/learn/effect.js";
import { LessonManager } from "../../src/learn/manager.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { shopTools } from "../helpers/shop-world.js";

/**
 * Effects per distinct caller (issue 44, item 7): in a partition several callers share, a lesson's
 * verdict needs enough distinct callers on each side and must not hang on one caller's records,
 * so one caller's crafted refused calls cannot undo a lesson that helped the others; a lesson the
 * effect check undid is proposed again once fresh evidence comes from other callers.
 */

const P = "tenant";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** lookup_order refused for an id without its prefix; each record carries its caller's digest (as the recorder writes it). */
async function world(options: { callers: boolean }) {
  const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
  await registerTools(ledger, shopTools("lookup_order", "track_parcel"), { partition: P });
  const manager = new LessonManager({ ledger, index: new ToolIndex({ ledger }) });
  let seq = 0;
  async function lookup(caller: string, refused: boolean): Promise<void> {
    seq += 1;
    const requestId = `q${String(seq).padStart(5, "0")}`;
    const threadId = `${caller}-${seq}`;
    const who = options.callers ? { caller: `digest-${caller}` } : {};
    const calls = [...(refused ? [{ error: true }] : []), { error: false }];
    await ledger.appendCalls(
      calls.map((c, i) => ({
        partition: P,
        tool: "lookup_order",
        runId: `${requestId}-${i}`,
        threadId,
        requestId,
        request: "where is order <number>?",
        args: [],
        fingerprints: [],
        outcome: c.error ? ("error" as const) : ("success" as const),
        ...(c.error ? { errorClass: "validation" as const, errorMessage: "order_id must start with ORD-" } : {}),
        source: "api" as const,
        ...who,
      })),
    );
    await ledger.appendTurns([
      {
        partition: P,
        threadId,
        requestId,
        request: "where is order <number>?",
        calls: calls.map((c) => ({
          tool: "lookup_order",
          outcome: c.error ? ("error" as const) : ("success" as const),
          ...(c.error ? { errorClass: "validation" as const } : {}),
        })),
        servedBy: "lookup_order",
        ...who,
      },
    ]);
  }
  /** Twelve refused turns from four callers, reviewed; the note applied. */
  async function learnAndApply() {
    for (let i = 0; i < 12; i++) await lookup(["ann", "bob", "cai", "dee"][i % 4], true);
    const review = await manager.review({ partition: P });
    const revision = review.revisions.find((r) => r.tool === "lookup_order")!;
    expect(revision.notesAdded.length).toBeGreaterThan(0);
    await sleep(3);
    const applied = await manager.apply(revision.id, { partition: P, approvedBy: "ops" });
    await sleep(3);
    return applied;
  }
  return { ledger, manager, lookup, learnAndApply };
}

/** After the lesson: three callers' lookups go right; one caller sends 20 crafted refused calls. */
async function floodAfter(w: Awaited<ReturnType<typeof world>>) {
  for (let i = 0; i < 24; i++) await w.lookup(["eve", "fay", "gus"][i % 3], false);
  for (let i = 0; i < 20; i++) await w.lookup("mallory", true);
}

describe("effects per distinct caller", () => {
  it("one caller's crafted refused calls cannot undo a lesson that helped the other callers", async () => {
    const w = await world({ callers: true });
    const applied = await w.learnAndApply();
    expect(applied.baseline?.[0].before).toMatchObject({ callers: 4, opportunities: 24, events: 12 });
    await floodAfter(w);
    const [effect] = await w.manager.effects({ partition: P, undoFlagged: true });
    expect(effect.id).toBe(applied.id);
    expect(effect.verdict).toBe("not_enough_data");
    expect(effect.undone).toBeUndefined();
    expect((await w.manager.history("lookup_order", { partition: P }))[0].status).toBe("applied");
  });

  it("the same traffic with no caller told apart (one anonymous caller) is judged as before: the flood undoes it", async () => {
    const w = await world({ callers: false });
    const applied = await w.learnAndApply();
    await floodAfter(w);
    const [effect] = await w.manager.effects({ partition: P, undoFlagged: true });
    expect(effect.id).toBe(applied.id);
    expect(effect.verdict).toBe("no_effect");
    expect(effect.undone).toBe(true);
  });

  it("an undone lesson is proposed again when fresh evidence comes from other callers, not from one", async () => {
    for (const fresh of [["hal", "ivy", "jon"], ["hal"]]) {
      const w = await world({ callers: true });
      const applied = await w.learnAndApply();
      // Refusals go on for every caller: no effect, undone.
      for (let i = 0; i < 24; i++) await w.lookup(["eve", "fay", "gus", "kim"][i % 4], i % 2 === 0);
      const [effect] = await w.manager.effects({ partition: P, undoFlagged: true });
      expect(effect).toMatchObject({ id: applied.id, verdict: "no_effect", undone: true });
      await sleep(3);
      for (let i = 0; i < 12; i++) await w.lookup(fresh[i % fresh.length], true);
      const review = await w.manager.review({ partition: P });
      const again = review.revisions.find((r) => r.tool === "lookup_order");
      if (fresh.length >= MIN_EFFECT_CALLERS) {
        expect(again?.notesAdded).toEqual(applied.notesAdded);
      } else {
        expect(again).toBeUndefined();
        expect(review.refused.some((x) => x.tool === "lookup_order" && x.refusal.reason === "turned_down")).toBe(true);
      }
    }
  });
});

describe("judgeTarget with callers", () => {
  const target = { kind: "failure" as const, errorClass: "validation" as const };
  const before = { opportunities: 40, events: 20, callers: 4, heaviest: { opportunities: 10, events: 5 } };
  const honest = { opportunities: 10, events: 0 };

  it("a verdict one caller's records decide is not enough data", () => {
    const flood = { opportunities: 60, events: 30 };
    const after = { opportunities: 90, events: 30, callers: 4, byCaller: [honest, honest, honest, flood] };
    // Counted as one pool, the flood makes it look like no effect.
    const pooled = { opportunities: 40, events: 20 };
    expect(judgeTarget({ target, before: pooled }, { opportunities: 90, events: 30 }).verdict).toBe("no_effect");
    expect(judgeTarget({ target, before }, after).verdict).toBe("not_enough_data");
  });

  it("needs enough distinct callers on each side in a shared partition", () => {
    const after = { opportunities: 30, events: 0, callers: 2, byCaller: [honest, { opportunities: 20, events: 0 }] };
    expect(judgeTarget({ target, before }, after).verdict).toBe("not_enough_data");
    const three = { opportunities: 30, events: 0, callers: 3, byCaller: [honest, honest, honest] };
    expect(judgeTarget({ target, before }, three).verdict).toBe("helped");
    expect(judgeTarget({ target, before: { ...before, callers: 2 } }, three).verdict).toBe("not_enough_data");
  });

  it("judges a partition of one caller as before", () => {
    const one = { opportunities: 30, events: 0, callers: 1, byCaller: [{ opportunities: 30, events: 0 }] };
    expect(judgeTarget({ target, before: { opportunities: 40, events: 20, callers: 1 } }, one).verdict).toBe("helped");
  });
});
