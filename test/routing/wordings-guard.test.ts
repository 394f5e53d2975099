import { describe, expect, it } from "vitest";
import { guardSample, heldBackWordings, type GuardCase } from "../../src/routing/wordings-guard.js";
import { rankWithWordings } from "../../src/routing/wordings.js";

const hit = (tool: string, key: string, score: number) => ({ tool, key, score });
const cards = (scores: Record<string, number>) => new Map(Object.entries(scores));

describe("heldBackWordings", () => {
  it("holds back the wording that lifts another tool over a request its own card offered", () => {
    const cases: GuardCase[] = [
      { owner: "b", key: "b0", cards: cards({ b: 0.5, a: 0.3 }), hits: [hit("b", "b0", 1), hit("a", "a1", 0.9)] },
    ];
    expect(heldBackWordings(cases, { k: 1, best: 3 })).toEqual([{ tool: "a", key: "a1" }]);
  });

  it("leaves a request out when its own wording is the only reason it stays (the request is left out of its own hits)", () => {
    // b0 is the request itself: counted, b would stay first; left out, a's wording wins.
    const cases: GuardCase[] = [
      { owner: "b", key: "b0", cards: cards({ b: 0.5, a: 0.3 }), hits: [hit("b", "b0", 1), hit("a", "a1", 0.4)] },
    ];
    expect(heldBackWordings(cases, { k: 1, best: 3 })).toEqual([{ tool: "a", key: "a1" }]);
  });

  it("holds nothing for a request its card did not offer, or one the wordings keep offered", () => {
    const notOffered: GuardCase = {
      owner: "b",
      key: "b0",
      cards: cards({ a: 0.6, b: 0.5 }),
      hits: [hit("a", "a1", 0.9)],
    };
    const kept: GuardCase = {
      owner: "b",
      key: "b0",
      cards: cards({ b: 0.5, a: 0.3 }),
      hits: [hit("b", "b1", 0.8), hit("a", "a1", 0.9)],
    };
    expect(heldBackWordings([notOffered, kept], { k: 1, best: 3 })).toEqual([]);
  });

  it("takes round after round until the request is offered again, and blames only tools the wordings moved", () => {
    const c: GuardCase = {
      owner: "b",
      key: "b0",
      cards: cards({ c: 0.9, b: 0.5, a: 0.3 }),
      hits: [hit("a", "a1", 0.9), hit("a", "a2", 0.8), hit("c", "c1", 0.1), hit("a", "a3", 0.1)],
    };
    // best 1: a1 lifts a over b; held, a2 does; held, a3 (0.4 < 0.5) does not. c was above by its card.
    expect(heldBackWordings([c], { k: 2, best: 1 })).toEqual([
      { tool: "a", key: "a1" },
      { tool: "a", key: "a2" },
    ]);
    expect(heldBackWordings([c], { k: 2, best: 1, rounds: 1 })).toEqual([{ tool: "a", key: "a1" }]);
  });
});

describe("guardSample", () => {
  it("takes tools round-robin, so a small tool is checked in full before a large one's rest", () => {
    const stored = new Map([
      ["big", new Map(["k1", "k2", "k3", "k4"].map((k) => [k, `text ${k}`]))],
      ["small", new Map([["s1", "text s1"]])],
    ]);
    const sample = guardSample(stored, 3);
    expect(sample.map((s) => s.tool)).toEqual(["big", "small", "big"]);
    expect(guardSample(stored, 100)).toHaveLength(5);
    expect(new Set(guardSample(stored, 100).map((s) => s.key)).size).toBe(5);
  });
});

describe("rankWithWordings", () => {
  const cardScores = new Map([
    ["clock", 0.6],
    ["weather", 0.3],
    ["trip", 0.2],
    ["fuel", 0.1],
  ]);
  it("ranks by card plus wording term, and with keep 2 keeps the card's best tool offered in the last place", () => {
    const terms = new Map([
      ["weather", 1.5],
      ["trip", 1.2],
      ["fuel", 0.9],
    ]);
    expect(rankWithWordings(cardScores, terms, 2, -Infinity, 2).map(([t]) => t)).toEqual(["weather", "clock"]);
    expect(rankWithWordings(cardScores, terms, 3, -Infinity, 2).map(([t]) => t)).toEqual(["weather", "trip", "clock"]);
    // Without wordings, or with k 1, the ranking is the scores' alone.
    expect(rankWithWordings(cardScores, undefined, 2, -Infinity).map(([t]) => t)).toEqual(["clock", "weather"]);
    expect(rankWithWordings(cardScores, terms, 1, -Infinity, 2).map(([t]) => t)).toEqual(["weather"]);
  });
  it("with keep 2, keeps the cards' best two when k leaves room: each pushed out takes a place at the end, in score order", () => {
    const terms = new Map([
      ["trip", 1.5],
      ["fuel", 1.2],
    ]);
    expect(rankWithWordings(cardScores, terms, 3, -Infinity, 2).map(([t]) => t)).toEqual(["trip", "clock", "weather"]);
    expect(rankWithWordings(cardScores, terms, 3, -Infinity, 1).map(([t]) => t)).toEqual(["trip", "fuel", "clock"]);
    // keep 0: the scores alone.
    expect(rankWithWordings(cardScores, terms, 3, -Infinity, 0).map(([t]) => t)).toEqual(["trip", "fuel", "clock"]);
    expect(rankWithWordings(cardScores, terms, 2, -Infinity, 0).map(([t]) => t)).toEqual(["trip", "fuel"]);
  });

  it("keeps the card's best out when it is under minScore, and changes nothing when it is offered", () => {
    const terms = new Map([["weather", 1.5]]);
    expect(rankWithWordings(cardScores, terms, 2, 0.65, 2).map(([t]) => t)).toEqual(["weather"]);
    expect(rankWithWordings(cardScores, terms, 2, -Infinity, 2).map(([t]) => t)).toEqual(["weather", "clock"]);
  });
});
