import { describe, expect, it } from "vitest";
import { EvidenceTally } from "../../../src/learn/review/tally.js";
import type { RouteRecord, TurnRecord } from "../../../src/ledger/schema.js";

let seq = 0;
const id = () => `id-${String(++seq).padStart(6, "0")}`;

function turn(partition: string, threadId: string, calls: [string, boolean][], request = "a request"): TurnRecord {
  const servedBy = [...calls].reverse().find(([, ok]) => ok)?.[0];
  return {
    v: 1,
    id: id(),
    partition,
    threadId,
    requestId: `r-${seq}`,
    request,
    at: Date.now(),
    calls: calls.map(([tool, ok]) => ({
      tool,
      outcome: ok ? "success" : "error",
      ...(ok ? {} : { errorClass: "validation" as const }),
    })),
    ...(servedBy ? { servedBy } : {}),
  } as TurnRecord;
}

const TOOLS = ["lookup_order", "refund_order", "track_parcel"];

describe("EvidenceTally", () => {
  it("counts refused calls across threads and says a tool is due at minFailures", () => {
    const tally = new EvidenceTally({ tools: TOOLS });
    tally.turn(
      turn("p", "t1", [
        ["lookup_order", false],
        ["lookup_order", true],
      ]),
    );
    expect(tally.due("p")).toEqual([]);
    tally.turn(
      turn("p", "t2", [
        ["lookup_order", false],
        ["lookup_order", true],
      ]),
    );
    expect(tally.due("p")).toEqual([{ tool: "lookup_order", kinds: ["failure"] }]);
    // Another partition counts for itself.
    expect(tally.due("q")).toEqual([]);
    // Reviewed: counted again from nothing.
    tally.reviewed("p", ["lookup_order"]);
    expect(tally.due("p")).toEqual([]);
    expect(tally.of("p", "lookup_order")).toEqual({ refused: 0, misses: 0, confusions: 0 });
  });

  it("finds misses and confusions with detection's rules, each thread's with its own turn before, over many threads", () => {
    const tally = new EvidenceTally({ tools: TOOLS });
    for (const thread of ["a", "b"]) {
      // A first wording that reached track_parcel, then the next request served by refund_order.
      tally.turn(turn("p", thread, [["track_parcel", true]], "money back please"));
      tally.turn(turn("p", thread, [["refund_order", true]], "refund order ORD-######"));
    }
    expect(tally.of("p", "refund_order")).toEqual({ refused: 0, misses: 2, confusions: 0 });
    expect(tally.of("p", "track_parcel")).toEqual({ refused: 0, misses: 0, confusions: 2 });
    expect(tally.due("p")).toEqual([
      { tool: "refund_order", kinds: ["miss"] },
      { tool: "track_parcel", kinds: ["confusion"] },
    ]);
  });

  it("a request served by a tool routing did not offer is a miss; the partition's own rules apply once told", () => {
    const tally = new EvidenceTally({ tools: TOOLS });
    tally.setRules("p", { minFailures: 2, minMisses: 1, minConfusions: 2 });
    const t = turn("p", "x", [["refund_order", true]]);
    const route: RouteRecord = {
      v: 1,
      id: id(),
      partition: "p",
      threadId: "x",
      requestId: t.requestId,
      offered: [{ tool: "track_parcel", rank: 1, score: 0.5 }],
      allSent: false,
      k: 1,
      at: Date.now(),
    } as RouteRecord;
    tally.route(route);
    tally.turn(t);
    expect(tally.due("p")).toEqual([{ tool: "refund_order", kinds: ["miss"] }]);
    expect(tally.of("p", "track_parcel").confusions).toBe(1);
  });

  it("stays bounded: the oldest threads are forgotten", () => {
    const tally = new EvidenceTally({ tools: TOOLS, maxThreads: 1 });
    tally.turn(turn("p", "a", [], "first wording"));
    tally.turn(turn("p", "b", [], "other thread"));
    // Thread a's turn before was forgotten: its next request finds no miss.
    tally.turn(turn("p", "a", [["refund_order", true]]));
    expect(tally.of("p", "refund_order").misses).toBe(0);
  });

  it("counts a watched tool's calls for its effect check, only while watched, and starts again once due", () => {
    const tally = new EvidenceTally({ tools: TOOLS });
    tally.turn(turn("p", "w0", [["lookup_order", true]]));
    expect(tally.sinceEffectCheck("p", "lookup_order")).toBeUndefined();
    tally.watch("p", ["lookup_order", "not_a_tool"]);
    expect(tally.sinceEffectCheck("p", "not_a_tool")).toBeUndefined();
    for (let i = 0; i < 3; i++)
      tally.turn(
        turn("p", `w${i + 1}`, [
          ["lookup_order", false],
          ["lookup_order", true],
          ["refund_order", true],
        ]),
      );
    expect(tally.sinceEffectCheck("p", "lookup_order")).toBe(6);
    expect(tally.effectDue("p", 7)).toEqual([]);
    expect(tally.effectDue("p", 6)).toEqual(["lookup_order"]);
    expect(tally.sinceEffectCheck("p", "lookup_order")).toBe(0);
    // Another partition is not counted; an unwatched tool is forgotten.
    expect(tally.effectDue("q", 0)).toEqual([]);
    tally.unwatch("p", ["lookup_order"]);
    tally.turn(turn("p", "w9", [["lookup_order", true]]));
    expect(tally.sinceEffectCheck("p", "lookup_order")).toBeUndefined();
    expect(tally.effectDue("p", 0)).toEqual([]);
  });
});
