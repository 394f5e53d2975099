import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { effectWorld, P } from "./effect-world.js";

/**
 * A lesson's measured effect through the manager: after it is applied, the traffic either stops
 * failing (the lesson helped) or goes on failing as before (flagged, and undone under `undoFlagged`).
 */
const world = () => effectWorld(new Ledger(new InMemoryStore(), { failureSink: () => undefined }));

describe("LessonManager.effects", () => {
  it("says not enough data until the calls after it reach the minimum, then measures a lesson that stopped the refusals as helping", async () => {
    const w = await world();
    const applied = await w.learnAndApply();
    for (let i = 0; i < 5; i++) await w.lookup(false);
    expect((await w.manager.effects()).map((e) => [e.id, e.verdict])).toEqual([[applied.id, "not_enough_data"]]);
    for (let i = 0; i < 20; i++) await w.lookup(false);
    const [effect] = await w.manager.effects();
    expect(effect).toMatchObject({ id: applied.id, tool: "lookup_order", verdict: "helped" });
    expect(effect.targets[0]).toMatchObject({
      before: { opportunities: 24, events: 12 },
      after: { opportunities: 25, events: 0 },
    });
    expect(effect.flag).toBeUndefined();
    // Measuring writes nothing; undo leaves a lesson that helped in place.
    await w.manager.effects({ undoFlagged: true });
    expect((await w.manager.history("lookup_order"))[0].status).toBe("applied");
  });

  it("flags a lesson after which the refusals go on as before, and undoes it under `undo`, the reason recorded", async () => {
    const w = await world();
    const applied = await w.learnAndApply();
    for (let i = 0; i < 12; i++) await w.lookup(true);
    const [flagged] = await w.manager.effects();
    expect(flagged).toMatchObject({ id: applied.id, verdict: "no_effect" });
    expect(flagged.flag).toBe("no measured effect on what it answered (failure:validation 12/24 → 12/24)");
    // Without `undo` nothing changes.
    expect((await w.manager.history("lookup_order"))[0].status).toBe("applied");
    const cardBefore = applied.learnedBefore;
    await w.manager.effects({ undoFlagged: true, by: "effect-check" });
    const [undone] = await w.manager.history("lookup_order");
    expect(undone).toMatchObject({
      id: applied.id,
      status: "undone",
      closedBy: "effect-check",
      undoneBecause: flagged.flag,
    });
    expect((await w.ledger.getCard(P, "lookup_order"))?.learned).toEqual(cardBefore);
    // An undone revision is no longer measured.
    expect(await w.manager.effects()).toEqual([]);
  });

  it("reads only within the review's window bounds: a smaller window reads fewer calls after the lesson", async () => {
    const w = await world();
    await w.learnAndApply();
    for (let i = 0; i < 25; i++) await w.lookup(false);
    const [whole] = await w.manager.effects();
    expect(whole.targets[0].after).toMatchObject({ opportunities: 25, events: 0 });
    // The newest 10 turns, and the tool's calls since them, at least maxCallsPerTool (12): 12 calls.
    const [bounded] = await w.manager.effects({ config: { reviewTurns: 10, maxCallsPerTool: 12 } });
    expect(bounded.targets[0].after).toMatchObject({ opportunities: 12, events: 0 });
    expect(bounded.verdict).toBe("not_enough_data");
  });

  it("refuses malformed options with a typed error", async () => {
    const w = await world();
    await expect(w.manager.effects({ config: { reviewTurns: 0 } })).rejects.toMatchObject({ name: "InvalidInput" });
    await expect(w.manager.effects({ by: "  " })).rejects.toMatchObject({ name: "InvalidInput" });
  });
});
