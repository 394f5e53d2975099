import { describe, expect, it } from "vitest";
import { cardProbes, heldOutSlice, judgeSlice, type SliceRoute } from "../../../src/learn/review/guard.js";

/**
 * The guard on the whole, as pure decisions: which served requests are held out (each tool's
 * newest, never what the change learned from), and when a change is refused: top-1 on the slice
 * falls, one tool loses more than 2, a tool's new wordings take its near-duplicate's requests.
 */

const turn = (requestId: string, servedBy: string, request = `request ${requestId}`) => ({
  id: requestId,
  requestId,
  servedBy,
  request,
});

describe("heldOutSlice", () => {
  it("holds out each tool's newest quarter (at least one) and lets in the turns before it", () => {
    const turns = [
      ...Array.from({ length: 8 }, (_, i) => turn(`a${i}`, "popular")),
      turn("b0", "tail_one"),
      turn("c0", "tail_two"),
      turn("c1", "tail_two"),
    ];
    const { slice, candidate } = heldOutSlice(turns, ["popular", "tail_one", "tail_two"], new Map(), {
      share: 0.25,
      maxSlice: 100,
    });
    const held = slice.map((s) => s.requestId).sort();
    expect(held).toEqual(["a6", "a7", "b0", "c1"]);
    // What is tested is never learned from: each tool's gate stops before its held-out turns.
    expect(candidate.get("popular")).toBe("a5");
    expect(candidate.get("tail_two")).toBe("c0");
    expect(candidate.has("tail_one")).toBe(false);
  });

  it("never holds out what the gate already let in, and keeps the gate of a tool with nothing new", () => {
    const turns = Array.from({ length: 4 }, (_, i) => turn(`a${i}`, "popular"));
    const gate = new Map([["popular", "a3"]]);
    const { slice, candidate } = heldOutSlice(turns, ["popular"], gate, { share: 0.25, maxSlice: 100 });
    expect(slice).toEqual([]);
    expect(candidate.get("popular")).toBe("a3");
  });

  it("orders by turn id, not request id, and lets in next time what it held out, when nothing new arrived", () => {
    // Request ids are the model's or the client's (a uuid, a hash): they do not sort by time.
    const turns = ["zz", "aa", "mm", "bb"].map((requestId, i) => ({ ...turn(`0${i}`, "tail_one"), requestId }));
    const first = heldOutSlice(turns, ["tail_one"], new Map(), { share: 0.25, maxSlice: 100 });
    expect(first.slice.map((s) => s.requestId)).toEqual(["bb"]);
    expect(first.candidate.get("tail_one")).toBe("02");
    // The next review, nothing arrived since (ids below `arrivedFrom`): the held-out turn is let in.
    const next = heldOutSlice(turns, ["tail_one"], first.candidate, { share: 0.25, maxSlice: 100 }, "10");
    expect(next.slice).toEqual([]);
    expect(next.candidate.get("tail_one")).toBe("03");
    // A one-request tool learns the review after its request arrived.
    const one = [turn("05", "tail_two")];
    expect(heldOutSlice(one, ["tail_two"], new Map(), { share: 0.25, maxSlice: 100 }).candidate.has("tail_two")).toBe(
      false,
    );
    expect(
      heldOutSlice(one, ["tail_two"], new Map(), { share: 0.25, maxSlice: 100 }, "10").candidate.get("tail_two"),
    ).toBe("05");
    // New turns arrived: the newest of them are held out, the one held out before is let in.
    const more = [...turns, turn("11", "tail_one"), turn("12", "tail_one")];
    const third = heldOutSlice(more, ["tail_one"], next.candidate, { share: 0.25, maxSlice: 100 }, "10");
    expect(third.slice.map((s) => s.id)).toEqual(["12", "11"]);
    expect(third.candidate.get("tail_one")).toBe("03");
  });

  it("leaves out turns of unregistered tools and caps the slice round-robin over the tools", () => {
    const turns = [
      ...Array.from({ length: 40 }, (_, i) => turn(`a${String(i).padStart(2, "0")}`, "popular")),
      ...Array.from({ length: 40 }, (_, i) => turn(`b${String(i).padStart(2, "0")}`, "other")),
      turn("z0", "not_registered"),
    ];
    const { slice } = heldOutSlice(turns, ["popular", "other"], new Map(), { share: 0.25, maxSlice: 6 });
    expect(slice).toHaveLength(6);
    expect(slice.filter((s) => s.owner === "popular")).toHaveLength(3);
    expect(slice.some((s) => s.owner === "not_registered")).toBe(false);
    // Each tool's newest first, the tools in name order.
    expect(slice.slice(0, 4).map((s) => s.requestId)).toEqual(["b39", "a39", "b38", "a38"]);
  });
});

describe("judgeSlice", () => {
  /** A long-tail slice: the popular tool's requests rise to rank 1, each one-request tool's falls. */
  function longTail(): SliceRoute[] {
    const routes: SliceRoute[] = [];
    // 6 popular requests: 3 were at rank 2 and rise to rank 1 with the change.
    for (let i = 0; i < 6; i++)
      routes.push({
        owner: "popular",
        before: i < 3 ? ["other", "popular"] : ["popular", "other"],
        after: ["popular", "other"],
      });
    // 5 tools with one request each: each was first, the popular tool's wordings now come first.
    for (let i = 0; i < 5; i++)
      routes.push({ owner: `tail_${i}`, before: [`tail_${i}`, "popular"], after: ["popular", `tail_${i}`] });
    return routes;
  }

  it("refuses a change that raises the popular tool and lowers many one-request tools, naming the reason and who pulled", () => {
    const judged = judgeSlice(longTail(), 5, 2, new Set(["popular"]));
    // Every tool lost at most 1 request: a per-tool guard lets this through.
    expect(Math.max(...judged.losses.map((l) => l.top1))).toBe(1);
    expect(judged.top1Before).toBeCloseTo(8 / 11);
    expect(judged.top1After).toBeCloseTo(6 / 11);
    expect(judged.failure).toBe("top-1 on the held-out slice would fall from 8 to 6 of 11");
    expect(judged.pullers.get("popular")).toBe(5);
  });

  it("passes the same change when the tail keeps rank 1", () => {
    const routes = longTail().map((r) => (r.owner.startsWith("tail_") ? { ...r, after: r.before } : r));
    const judged = judgeSlice(routes, 5, 2, new Set(["popular"]));
    expect(judged.failure).toBeUndefined();
    expect(judged.top1After).toBeGreaterThan(judged.top1Before);
  });

  it("refuses a change under which one tool loses more than 2 though top-1 rises", () => {
    const routes: SliceRoute[] = [
      ...Array.from({ length: 3 }, () => ({ owner: "victim", before: ["victim"], after: ["thief", "victim"] })),
      ...Array.from({ length: 5 }, () => ({ owner: "thief", before: ["x", "thief"], after: ["thief"] })),
    ];
    const judged = judgeSlice(routes, 5, 2, new Set(["thief"]));
    expect(judged.top1After).toBeGreaterThan(judged.top1Before);
    expect(judged.failure).toBe('"victim" would lose 3 of its 3 held-out requests (at most 2)');
  });

  it("refuses when the tools with no wordings of their own lose rank 1, though the whole rises", () => {
    const routes: SliceRoute[] = [
      { owner: "cold", before: ["cold"], after: ["warm", "cold"] },
      ...Array.from({ length: 3 }, () => ({ owner: "warm", before: ["cold", "warm"], after: ["warm"] })),
    ];
    const judged = judgeSlice(routes, 5, 2, new Set(["warm"]), new Map(), new Set(["cold"]));
    expect(judged.top1After).toBeGreaterThan(judged.top1Before);
    expect(judged.failure).toMatch(/no wordings of their own would fall from 1 to 0/);
  });

  it("refuses when the card probes of tools with no traffic lose rank 1", () => {
    const routes: SliceRoute[] = [
      { owner: "quiet", probe: true, before: ["quiet"], after: ["loud", "quiet"] },
      { owner: "loud", before: ["quiet", "loud"], after: ["loud"] },
    ];
    const judged = judgeSlice(routes, 5, 2, new Set(["loud"]));
    // The served slice alone gains.
    expect(judged.top1After).toBe(1);
    expect(judged.failure).toMatch(/no traffic would lose rank 1 for their own description: 1 to 0 of 1/);
    expect(judged.pullers.get("loud")).toBe(1);
  });

  it("refuses a version's wordings that take a request its near-duplicate served, whatever the totals", () => {
    const routes: SliceRoute[] = [
      { owner: "get_weather", before: ["get_weather"], after: ["get_weather_v2", "get_weather"] },
      ...Array.from({ length: 4 }, () => ({
        owner: "get_weather_v2",
        before: ["x", "get_weather_v2"],
        after: ["get_weather_v2"],
      })),
    ];
    const duplicates = new Map([
      ["get_weather", new Set(["get_weather_v2"])],
      ["get_weather_v2", new Set(["get_weather"])],
    ]);
    const judged = judgeSlice(routes, 5, 2, new Set(["get_weather_v2"]), duplicates);
    expect(judged.top1After).toBeGreaterThan(judged.top1Before);
    expect(judged.duplicatePulls.get("get_weather_v2")).toBe("get_weather");
    expect(judged.failure).toBe('"get_weather_v2" took held-out requests of its near-duplicate "get_weather"');
  });

  it("counts as pullers only the tools the trial changes", () => {
    const routes: SliceRoute[] = [{ owner: "a", before: ["a", "b"], after: ["b", "a"] }];
    expect(judgeSlice(routes, 5, 2, new Set(["c"])).pullers.size).toBe(0);
  });
});

describe("cardProbes", () => {
  it("probes each tool with no served request by its description's first sentence", () => {
    const card = (name: string, description: string) => ({
      name,
      author: { description, argNames: [], schema: {}, examples: [] },
    });
    const probes = cardProbes(
      [card("served", "Served tool."), card("quiet", "Finds quiet places. Also more text."), card("blank", "  ")],
      new Set(["served"]),
      10,
    );
    expect(probes).toEqual([{ owner: "quiet", request: "Finds quiet places." }]);
  });
});
