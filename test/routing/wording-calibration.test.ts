import { describe, expect, it } from "vitest";
import {
  calibratedTerms,
  confidenceRaise,
  scoreSpread,
  FIRST_CARDS,
  liftShare,
  type ToolBackground,
  wordingBackgrounds,
  wordingEvidence,
} from "../../src/routing/wording-calibration.js";

describe("wordingEvidence", () => {
  it("averages each tool's best hits, and fills what the hits stop short of with the last hit", () => {
    const hits = [
      ["a", 0.9],
      ["b", 0.5],
      ["a", 0.7],
      ["a", 0.6],
      ["a", 0.1],
      ["c", 0.2],
    ] as const;
    const counts = new Map([
      ["a", 10],
      ["b", 10],
      ["c", 1],
      ["d", 4],
    ]);
    const full = wordingEvidence({ hits, truncated: false }, counts, 3);
    expect(full.get("a")).toBeCloseTo((0.9 + 0.7 + 0.6) / 3);
    // All wordings are among the hits: b's one hit is all it has.
    expect(full.get("b")).toBeCloseTo(0.5);
    expect(full.get("c")).toBeCloseTo(0.2);
    const cut = wordingEvidence({ hits, truncated: true }, counts, 3);
    // b's two missing best are at most the last hit (0.1); d, with no hit, is at most it too.
    expect(cut.get("b")).toBeCloseTo((0.5 + 0.1 + 0.1) / 3);
    expect(cut.get("d")).toBeCloseTo(0.1);
    // A tool with one wording averages one.
    expect(cut.get("c")).toBeCloseTo(0.2);
  });
});

describe("wordingBackgrounds", () => {
  it("reads a tool only on other tools' requests, cards and wordings alike", () => {
    const bg = wordingBackgrounds([
      {
        owner: "a",
        cards: new Map([
          ["a", 0.9],
          ["b", 0.1],
        ]),
        evidence: new Map([
          ["a", 0.9],
          ["b", 0.2],
        ]),
      },
      {
        owner: "b",
        cards: new Map([
          ["a", 0.3],
          ["b", 0.8],
        ]),
        evidence: new Map([
          ["a", 0.4],
          ["b", 0.9],
        ]),
      },
      {
        owner: "c",
        cards: new Map([
          ["a", 0.1],
          ["b", 0.3],
        ]),
        evidence: new Map([
          ["a", 0.2],
          ["b", 0.4],
        ]),
      },
    ]);
    expect(bg.get("a")!.samples).toBe(2);
    expect(bg.get("a")!.mean).toBeCloseTo(0.3);
    expect(bg.get("a")!.cardMean).toBeCloseTo(0.2);
    expect(bg.get("b")!.mean).toBeCloseTo(0.3);
    expect(bg.get("b")!.sd).toBeGreaterThan(0.09);
  });
});

const background = (mean: number): ToolBackground => ({ samples: 50, mean, sd: 0.05, cardMean: 0.1, cardSd: 0.04 });
const OPTIONS = { weight: 0.85, lift: 1, lower: 20, sticky: 0, standOut: 3 };
const rank = (cards: ReadonlyMap<string, number>, terms: ReadonlyMap<string, number>) =>
  [...cards]
    .map(([tool, c]) => [tool, c + (terms.get(tool) ?? 0)] as const)
    .sort((a, b) => b[1] - a[1])
    .map(([t]) => t);

/** Twenty-two tools: `a`, `b` and ten busy ones may have wordings, ten quiet ones have a card only. */
function catalogue(cardA: number, cardB: number) {
  const cards = new Map<string, number>([
    ["a", cardA],
    ["b", cardB],
  ]);
  for (let i = 0; i < 10; i++) cards.set(`quiet${i}`, 0.05 + i * 0.01);
  for (let i = 0; i < 10; i++) cards.set(`busy${i}`, 0.02 + i * 0.005);
  return cards;
}

describe("calibratedTerms", () => {
  it("a tool without wordings keeps its card score: only tools with wordings get a term", () => {
    const cards = catalogue(0.2, 0.1);
    const terms = calibratedTerms(
      cards,
      new Map([
        ["a", 0.5],
        ["b", 0.2],
      ]),
      new Map([
        ["a", 30],
        ["b", 30],
      ]),
      new Map(),
      OPTIONS,
    );
    expect([...terms.keys()].sort()).toEqual(["a", "b"]);
  });

  it("having traffic does not raise a tool by itself: wordings that match no better than others' leave the card order", () => {
    // The cards put quiet9 (0.14) over a (0.12); a's wordings match this request as the
    // partition's wordings match any request (its evidence is the others' level).
    const cards = catalogue(0.12, 0.05);
    // Most tools have wordings; they match this request at the partition's usual level.
    const others = ["b", ...Array.from({ length: 10 }, (_, i) => `busy${i}`)];
    const evidence = new Map([["a", 0.2], ...others.map((t) => [t, 0.2] as [string, number])]);
    const counts = new Map([["a", 60], ...others.map((t) => [t, 60] as [string, number])]);
    const terms = calibratedTerms(cards, evidence, counts, new Map(), OPTIONS);
    expect(rank(cards, terms).indexOf("quiet9")).toBeLessThan(rank(cards, terms).indexOf("a"));
    // Wordings that match this request clearly better than the other tools' lift it over quiet9.
    const lifted = calibratedTerms(cards, new Map([...evidence, ["a", 0.6]]), counts, new Map(), OPTIONS);
    expect(rank(cards, lifted)[0]).toBe("a");
  });

  it("a few well-matching wordings lift fast; as many that match badly pull down little", () => {
    const cards = catalogue(0.12, 0.12);
    const counts = new Map([
      ["a", 3],
      ["b", 3],
    ]);
    const up = calibratedTerms(
      cards,
      new Map([
        ["a", 0.6],
        ["b", 0.3],
      ]),
      counts,
      new Map(),
      OPTIONS,
    );
    const down = calibratedTerms(
      cards,
      new Map([
        ["a", 0.0],
        ["b", 0.3],
      ]),
      counts,
      new Map(),
      OPTIONS,
    );
    expect(up.get("a")!).toBeGreaterThan(0);
    expect(down.get("a")!).toBeLessThan(0);
    expect(Math.abs(down.get("a")!)).toBeLessThan(up.get("a")!);
  });

  it("a tool whose wordings match every request (a high background) is lifted less than a focused one", () => {
    const cards = catalogue(0.1, 0.1);
    const evidence = new Map([
      ["a", 0.45],
      ["b", 0.45],
    ]);
    const counts = new Map([
      ["a", 30],
      ["b", 30],
    ]);
    const backgrounds = new Map([
      ["a", background(0.35)],
      ["b", background(0.1)],
    ]);
    const terms = calibratedTerms(cards, evidence, counts, backgrounds, OPTIONS);
    expect(terms.get("a")!).toBeLessThan(terms.get("b")!);
  });

  it("counts the part of a lift few wordings hold back only as far as their evidence stands out", () => {
    // quiet9..quiet5 (no wordings) lead the cards; a's wordings match most requests at 0.3 (spread 0.05).
    const cards = catalogue(0.09, 0.01);
    const backgrounds = new Map([["a", background(0.3)]]);
    const termOf = (evidence: number, standOut: number, n = 1) =>
      calibratedTerms(cards, new Map([["a", evidence]]), new Map([["a", n]]), backgrounds, {
        ...OPTIONS,
        standOut,
      }).get("a") ?? 0;
    // One wording, lift 1: half the lift is held back. 0.4 is 2 spreads above its background,
    // below standOut 3: that half does not count.
    expect(termOf(0.4, -Infinity)).toBeGreaterThan(0);
    expect(termOf(0.4, 3)).toBeCloseTo(termOf(0.4, -Infinity) / 2, 12);
    // Half-way up the ramp, three quarters; 5 spreads above and more, all of it.
    expect(termOf(0.5, 3)).toBeCloseTo((termOf(0.5, -Infinity) * 3) / 4, 12);
    expect(termOf(0.6, 3)).toBe(termOf(0.6, -Infinity));
    expect(liftShare(0.4, background(0.3), 0.6, 3)).toBeCloseTo(0.4, 12);
    // Many wordings hold back little: 99 of 100 of the lift counts with 99 of them.
    expect(termOf(0.4, 3, 99)).toBeCloseTo(termOf(0.4, -Infinity, 99) * 0.99, 12);
    // A pull down is never held back.
    expect(termOf(0.0, 3)).toBe(termOf(0.0, -Infinity));
  });

  it("gives the sticky bonus to the cards' first five only, ties by name", () => {
    const cards = new Map(Array.from({ length: 8 }, (_, i) => [`t${i}`, i === 7 ? 0.5 : 0.1] as [string, number]));
    const terms = calibratedTerms(cards, new Map(), new Map(), new Map(), { ...OPTIONS, sticky: 0.02 });
    expect([...terms.keys()].sort()).toEqual(["t0", "t1", "t2", "t3", "t7"]);
    expect(terms.size).toBe(FIRST_CARDS);
    expect(terms.get("t7")).toBe(0.02);
  });
});

describe("confidenceRaise", () => {
  const evidence = new Map([
    ["a", 0.3],
    ["b", 0.6],
  ]);
  it("is the best wording evidence of any tool times the weight, never below 0", () => {
    const many = new Map([
      ["a", 5],
      ["b", 5],
    ]);
    expect(confidenceRaise(evidence, many, 3, 2)).toBeCloseTo(1.2);
    expect(confidenceRaise(new Map([["a", -0.1]]), many, 3, 2)).toBe(0);
    expect(confidenceRaise(new Map(), many, 3, 2)).toBe(0);
    expect(confidenceRaise(evidence, many, 3, 0)).toBe(0);
  });

  it("reads a tool with fewer than `best` wordings for its share", () => {
    // b matches better but from one wording: 0.6 / 3 = 0.2 < a's 0.3 from three.
    const counts = new Map([
      ["a", 3],
      ["b", 1],
    ]);
    expect(confidenceRaise(evidence, counts, 3, 2)).toBeCloseTo(0.6);
    expect(confidenceRaise(evidence, new Map([["b", 2]]), 3, 2)).toBeCloseTo(0.8);
  });
});

describe("scoreSpread", () => {
  it("is the spread of card plus term over every tool of the cards", () => {
    const cards = new Map([
      ["a", 0.1],
      ["b", 0.3],
    ]);
    expect(scoreSpread(cards, new Map())).toBeCloseTo(0.1);
    // A term on a tool not among the cards is not read; one on a card tool moves the spread.
    expect(scoreSpread(cards, new Map([["z", 5]]))).toBeCloseTo(0.1);
    expect(scoreSpread(cards, new Map([["a", 0.2]]))).toBeCloseTo(0);
    expect(scoreSpread(new Map(), new Map())).toBe(0);
  });
});
