import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { registerTools } from "../../src/learn/register.js";
import { InvalidInput } from "../../src/errors.js";
import { LessonManager } from "../../src/learn/manager.js";
import { WhatIf } from "../../src/learn/what-if.js";
import { DEFAULT_EXAMPLE_OBJECTIVE, parseExampleObjective } from "../../src/learn/example-objective.js";
import { Ledger } from "../../src/ledger/ledger.js";

const P = "p";
const TOOLS = [
  { name: "refund_order", description: "Refund an order in full or in part to the original payment method." },
  { name: "track_shipment", description: "Track a parcel with the carrier's tracking number." },
  { name: "lookup_order", description: "Look up an order's status and items by its order id." },
];

/** Requests refund_order served in the users' words, and requests the parcel tracker served. */
const OWN = ["money back for the kettle", "I want my money back please", "give me my money back now"].map(
  (request) => ({ request }),
);
const OTHERS = ["where is my parcel", "where is my parcel now", "is my parcel lost"].map((request, i) => ({
  requestId: `o${i}`,
  request,
  servedBy: "track_shipment",
}));
const MONEY = { requestId: "m1", request: "I want my money back for the broken blender" };
const PARCEL = { requestId: "m2", request: "where is my parcel, I want a refund" };

/** A WhatIf over the three tools' registered cards, with the cards it was given. */
async function whatIfWithCards(examples?: { max?: number; half?: number }, k = 1, depth = k) {
  const ledger = new Ledger(new InMemoryStore());
  await registerTools(ledger, TOOLS, { partition: P });
  const index = new ToolIndex({ ledger, examples });
  await index.reindex(P);
  const cards = new Map((await ledger.listCards(P)).map((c) => [c.name, c]));
  return { whatIf: new WhatIf(index, P, k, cards, depth), cards };
}

async function whatIf(examples?: { max?: number; half?: number }, k = 1, depth = k) {
  return (await whatIfWithCards(examples, k, depth)).whatIf;
}

describe("WhatIf.probe", () => {
  it("leaves the tool out and looks down to the near depth: the k offered, and the rest for a wider router", async () => {
    const w = await whatIf(undefined, 1, 2);
    const probe = await w.probe("refund my order", "refund_order");
    expect(probe.others.map((o) => o.tool)).toHaveLength(1);
    expect(probe.near.map((o) => o.tool).sort()).toEqual(["lookup_order", "track_shipment"]);
    expect(probe.near.map((o) => o.tool)).not.toContain("refund_order");
    expect(probe.kth).toBe(probe.others[0].score);
    expect(probe.first).toBe(probe.others[0].score);
    expect(probe.nth).toBe(probe.near[1].score);
    // Deeper than there are other tools: nothing to beat at that depth.
    expect((await (await whatIf(undefined, 1, 5)).probe("refund my order", "refund_order")).nth).toBe(
      Number.NEGATIVE_INFINITY,
    );
  });
});

describe("WhatIf.displaces", () => {
  it("checks served requests spread over the window, not only the newest: an older request it would push out is found", async () => {
    // One example weighs as much as many would (half 0); routing offers one tool.
    const { whatIf: w, cards } = await whatIfWithCards({ half: 0 });
    const query = PARCEL.request;
    const card = await w.variant(cards.get("refund_order")!, [query]);
    const pushedOut = { request: "where is my parcel", servedBy: "track_shipment" };
    const safe = { request: "track my parcel by its tracking number please", servedBy: "track_shipment" };
    expect(await w.displaces("refund_order", query, card, [safe])).toBeNull();
    // The request it would push out is older than many more the check's bound could hold.
    const served = [...Array.from({ length: 20 }, () => pushedOut), ...Array.from({ length: 600 }, () => safe)];
    expect(await w.displaces("refund_order", query, card, served)).toEqual({ query, ...pushedOut });
  });
});

describe("WhatIf.chooseExamples", () => {
  it("chooses the wording that lifts the tool for its own requests, not one that takes another tool's", async () => {
    const w = await whatIf();
    const chosen = await w.chooseExamples(
      "refund_order",
      [PARCEL, MONEY],
      { own: OWN, others: OTHERS },
      4,
      DEFAULT_EXAMPLE_OBJECTIVE,
    );
    expect(chosen.map((c) => c.requestId)).toEqual(["m1"]);
    expect(chosen[0].gain).toBeGreaterThanOrEqual(DEFAULT_EXAMPLE_OBJECTIVE.minGain);
  });

  it("values a pick below zero when it takes rank 1 from the tool that served other requests", async () => {
    // One example weighs fully here, so the parcel wording lifts refund_order above the tracker.
    const w = await whatIf({ half: 0 });
    // Alone (no own request to lift), the parcel wording only costs.
    const chosen = await w.chooseExamples("refund_order", [PARCEL], { own: [], others: OTHERS }, 4, {
      ...DEFAULT_EXAMPLE_OBJECTIVE,
      softness: 0,
      minGain: -100,
    });
    expect(chosen).toHaveLength(1);
    expect(chosen[0].gain).toBeLessThan(0);
  });

  it("stops at the limit and when no pick adds minGain", async () => {
    const w = await whatIf();
    const candidates = [MONEY, { requestId: "m3", request: "money back on my kettle please" }];
    expect(
      await w.chooseExamples("refund_order", candidates, { own: OWN, others: OTHERS }, 1, DEFAULT_EXAMPLE_OBJECTIVE),
    ).toHaveLength(1);
    expect(
      await w.chooseExamples("refund_order", candidates, { own: OWN, others: OTHERS }, 4, {
        ...DEFAULT_EXAMPLE_OBJECTIVE,
        minGain: 100,
        fillGain: Number.POSITIVE_INFINITY,
      }),
    ).toEqual([]);
    // With the fill on, a free slot still takes a wording routing misses that costs nothing.
    const filled = await w.chooseExamples("refund_order", candidates, { own: OWN, others: OTHERS }, 4, {
      ...DEFAULT_EXAMPLE_OBJECTIVE,
      minGain: 100,
    });
    expect(filled.length).toBeGreaterThan(0);
    expect(filled.every((c) => c.gain >= 0 && c.gain < 100)).toBe(true);
    expect(
      await w.chooseExamples("refund_order", [], { own: OWN, others: OTHERS }, 4, DEFAULT_EXAMPLE_OBJECTIVE),
    ).toEqual([]);
    expect(
      await w.chooseExamples("no_such_tool", candidates, { own: OWN, others: OTHERS }, 4, DEFAULT_EXAMPLE_OBJECTIVE),
    ).toEqual([]);
  });
});

describe("WhatIf.chooseExampleSet", () => {
  async function atCap(examples: string[]) {
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, TOOLS, { partition: P });
    const index = new ToolIndex({ ledger });
    await index.reindex(P);
    const cards = new Map((await ledger.listCards(P)).map((c) => [c.name, c]));
    const card = cards.get("refund_order")!;
    cards.set("refund_order", {
      ...card,
      learned: { ...card.learned, examples: examples.map((text) => ({ text, source: "learned", addedAt: 1 })) },
    });
    return new WhatIf(index, P, 1, cards);
  }
  const OFF_TOPIC = "cancel the gym membership of my cousin";

  it("with no free slot, a better wording takes the slot of the learned example the set needs least", async () => {
    const w = await atCap([OFF_TOPIC]);
    const { chosen, yielding } = await w.chooseExampleSet(
      "refund_order",
      [MONEY],
      { own: OWN, others: OTHERS },
      { limit: 4, room: 0, replaceable: [OFF_TOPIC] },
      DEFAULT_EXAMPLE_OBJECTIVE,
    );
    expect(chosen.map((c) => [c.requestId, c.replaces])).toEqual([["m1", OFF_TOPIC]]);
    expect(yielding).toEqual([OFF_TOPIC]);
  });

  it("keeps a learned example the set still needs, and never exchanges without replaceable examples", async () => {
    const NEEDED = "I want my money back please";
    const w = await atCap([NEEDED]);
    const candidates = [{ requestId: "m4", request: "refund the order to the original payment method" }];
    const kept = await w.chooseExampleSet(
      "refund_order",
      candidates,
      { own: OWN, others: OTHERS },
      { limit: 4, room: 0, replaceable: [NEEDED] },
      DEFAULT_EXAMPLE_OBJECTIVE,
    );
    expect(kept).toEqual({ chosen: [], yielding: [] });
    const none = await w.chooseExampleSet(
      "refund_order",
      [MONEY],
      { own: OWN, others: OTHERS },
      { limit: 4, room: 0 },
      DEFAULT_EXAMPLE_OBJECTIVE,
    );
    expect(none).toEqual({ chosen: [], yielding: [] });
  });
});

describe("WhatIf.medoids", () => {
  /** Three wordings, one of them closest to the tool's requests (the kettle one). */
  const MEDOID_CASE = {
    candidates: [
      { requestId: "a", request: "is my parcel lost" },
      { requestId: "b", request: "I want my money back" },
      { requestId: "c", request: "money back for the kettle please" },
    ],
    own: [...OWN, { request: "kettle money back" }],
  };

  it("takes the wordings most like the tool's requests first, counting what the card covers already", async () => {
    const w = await whatIf();
    const { candidates, own } = MEDOID_CASE;
    expect((await w.medoids(candidates, own, [], 1)).map((c) => c.requestId)).toEqual(["c"]);
    // With the kettle wording on the card already, the next most useful one comes first.
    const next = await w.medoids(candidates, own, ["money back for the kettle please"], 2);
    expect(next.map((c) => c.requestId)[0]).toBe("b");
    expect(await w.medoids(candidates, own, [], 5)).toHaveLength(3);
  });

  it("orders every candidate by what it adds, also when there are fewer than n (a fill takes them in that order)", async () => {
    const w = await whatIf();
    const { candidates, own } = MEDOID_CASE;
    const order = (await w.medoids(candidates, own, [], 5)).map((c) => c.requestId);
    expect(order[0]).toBe("c");
    expect(order[2]).toBe("a");
  });
});

describe("WhatIf.chooseExampleSet fill", () => {
  it("fills a free slot with a wording routing already offers the tool for, when it does no harm", async () => {
    const w = await whatIf();
    // The first wording alone brings refund_order in for every money-back request: the second is
    // covered in-sample, yet its words widen what the set catches of requests not seen yet.
    const candidates = [
      { requestId: "m1", request: "I want my money back please" },
      { requestId: "m3", request: "give me my money back now" },
    ];
    const { chosen } = await w.chooseExampleSet(
      "refund_order",
      candidates,
      { own: OWN, others: OTHERS },
      { limit: 4 },
      DEFAULT_EXAMPLE_OBJECTIVE,
    );
    expect(chosen.map((c) => c.requestId).sort()).toEqual(["m1", "m3"]);
    // Off (fillGain Infinity), only the picks that add minGain are kept.
    const picks = await w.chooseExampleSet(
      "refund_order",
      candidates,
      { own: OWN, others: OTHERS },
      { limit: 4 },
      { ...DEFAULT_EXAMPLE_OBJECTIVE, fillGain: Number.POSITIVE_INFINITY },
    );
    expect(picks.chosen.length).toBeLessThan(chosen.length);
  });

  it("does not fill with a wording that takes rank 1 from the tool that served other requests", async () => {
    const w = await whatIf();
    const { chosen } = await w.chooseExampleSet(
      "refund_order",
      [{ requestId: "p1", request: "where is my parcel now" }],
      { own: OWN, others: OTHERS },
      { limit: 4 },
      DEFAULT_EXAMPLE_OBJECTIVE,
    );
    expect(chosen).toEqual([]);
  });
});

describe("parseExampleObjective", () => {
  it("lays the given fields over the defaults, undefined ones left out, Infinity allowed for a gain", () => {
    expect(parseExampleObjective(undefined)).toEqual(DEFAULT_EXAMPLE_OBJECTIVE);
    expect(parseExampleObjective({ lossWeight: 1, softness: undefined, fillGain: Infinity })).toEqual({
      ...DEFAULT_EXAMPLE_OBJECTIVE,
      lossWeight: 1,
      fillGain: Infinity,
    });
  });

  it("refuses an unknown field or a value out of range with InvalidInput naming the field, also from the manager", () => {
    const bad: Record<string, unknown>[] = [
      { lossWieght: 1 },
      { lossWeight: -1 },
      { nearDepth: 0 },
      { nearDepth: 2.5 },
      { softness: Number.NaN },
      { minGain: "1" },
      { offeredWeight: Infinity },
    ];
    for (const input of bad) {
      const field = Object.keys(input)[0];
      expect(() => parseExampleObjective(input as never), field).toThrow(InvalidInput);
      expect(() => parseExampleObjective(input as never), field).toThrow(new RegExp(field));
    }
    const ledger = new Ledger(new InMemoryStore());
    const index = new ToolIndex({ ledger });
    expect(() => new LessonManager({ ledger, index, exampleObjective: { lossWeight: -2 } })).toThrow(InvalidInput);
  });
});
