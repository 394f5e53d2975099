import { tool } from "@langchain/core/tools";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { toCases } from "../../src/evaluate/cases.js";
import {
  chatModelSelector,
  evaluateSelection,
  parseSelectionRun,
  routerSelector,
  type Selector,
} from "../../src/evaluate/harness.js";
import { diagnose } from "../../src/evaluate/diagnose.js";
import { isRateLimitError } from "../../src/memory/limit.js";
import { InvalidInput } from "../../src/errors.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { cardFromTool } from "../../src/ledger/cards.js";
import type { ToolCard } from "../../src/ledger/schema.js";
import { EVAL, TOOLS } from "../cli/synthetic-data.js";
import { rateLimited, ScriptedToolModel } from "./scripted-model.js";

const CASES = toCases([
  { turn: "any cheap plane tickets to lima", expect: "search_flights" },
  { turn: "book me a hotel room in oslo for two nights", expect: "book_hotel" },
  { turn: "what's the weather forecast for perth", expect: "get_weather" },
  { turn: "hello there", expect: null },
  { turn: "thanks, that's all", expect: [] },
]);

const noSleep = { sleep: async () => undefined };

describe("the harness in router mode", () => {
  it("picks the top-ranked tool; runs agree (the router is deterministic); no minScore never picks none", async () => {
    const selector = await routerSelector({ tools: TOOLS });
    expect(selector.deterministic).toBe(true);
    // One run by default: the router repeats exactly.
    expect((await evaluateSelection({ cases: CASES, selector })).runs).toBe(1);
    const report = await evaluateSelection({ cases: CASES, selector, runs: 3 });
    expect(report.mode).toBe("router");
    expect(report.runs).toBe(3);
    expect(report.cases.every((c) => c.outcomes.length === 3)).toBe(true);
    expect(report.agreement).toMatchObject({ cases: 5, unanimous: 5, share: 1 });
    const noTool = report.perTool.find((t) => t.tool === null)!;
    expect(noTool).toMatchObject({ cases: 2, expected: 6, picked: 0, recall: 0 });
    expect(report.warnings.some((w) => w.startsWith("router without minScore"))).toBe(true);
    expect(report.diagnoses.find((d) => d.kind === "null_row")?.fix).toContain(
      "Without minScore the router always offers a tool",
    );
  });

  it("with minScore a turn scoring below it picks no tool: the null column fills", async () => {
    const selector = await routerSelector({ tools: TOOLS, minScore: 0.2 });
    expect(selector.label).toContain("minScore 0.2");
    const report = await evaluateSelection({ cases: CASES, selector, runs: 1 });
    const picks = report.cases.map((c) => ("tool" in c.outcomes[0] ? c.outcomes[0].tool : "error"));
    expect(picks.slice(3)).toEqual([null, null]);
    expect(report.perTool.find((t) => t.tool === null)!.recall).toBe(1);
    expect(report.minScore).toBe(0.2);
    // The "no tool" figures from the router's scores agree with the null column.
    const nullColumn = report.perTool.find((t) => t.tool === null)!;
    expect(report.noTool).toMatchObject({ precision: nullColumn.precision, recall: 1, threshold: 0.2 });
    expect(report.noTool!.auroc).toBeGreaterThan(0.5);
    expect(report.scores).toHaveLength(CASES.length);
    // Without minScore: AUROC still, nothing abstains.
    const off = await evaluateSelection({ cases: CASES, selector: await routerSelector({ tools: TOOLS }), runs: 1 });
    expect(off.noTool).toEqual({ auroc: report.noTool!.auroc, precision: 0, recall: 0 });
    // The pick below minScore is none, but the ranking is the router's whatever minScore.
    expect(report.cases.map((c) => c.ranked)).toEqual(off.cases.map((c) => c.ranked));
  });

  it("routes with the learned examples of lessons: the after of a before/after", async () => {
    const turn = "I need a plane ticket to riga";
    const cases = toCases([{ turn, expect: "search_flights" }]);
    const before = await evaluateSelection({ cases, selector: await routerSelector({ tools: TOOLS }), runs: 1 });
    const card = cardFromTool({ name: "search_flights", description: "" }, "x");
    const lesson: ToolCard = {
      ...card,
      learned: {
        ...card.learned,
        examples: [{ text: "I need a plane ticket to lisbon", source: "learned", addedAt: 1 }],
      },
    };
    const after = await evaluateSelection({
      cases,
      selector: await routerSelector({ tools: TOOLS, lessons: [lesson] }),
      runs: 1,
    });
    expect(before.accuracy.accuracy).toBe(0);
    expect(after.accuracy.accuracy).toBe(1);
    expect(after.label).toContain("lessons of 1 tools");
  });

  it("on the synthetic eval set it counts every case once per run", async () => {
    const cases = toCases(EVAL.map((e) => ({ turn: e.query, expect: e.expect })));
    const report = await evaluateSelection({ cases, selector: await routerSelector({ tools: TOOLS }), runs: 2 });
    expect(report.accuracy.counted).toBe(EVAL.length * 2);
    expect(report.matrix.counts.flat().reduce((a, b) => a + b, 0)).toBe(EVAL.length * 2);
  });
});

describe("the harness in chat-model mode", () => {
  /** Tools right, except: chit-chat calls get_weather once in three; "forecast" is answered from memory; "riga" flips. */
  const script = (turn: string, attempt: number) => {
    if (turn === "hello there") return attempt === 1 ? "get_weather" : null;
    if (turn === "thanks, that's all") return "set_reminder";
    if (turn.includes("forecast")) return null;
    if (turn.includes("plane")) return "search_flights";
    if (turn.includes("hotel")) return attempt % 2 === 0 ? "book_hotel" : "find_restaurant";
    return null;
  };

  it("takes the first tool call; fills the null row and column; repeats can disagree", async () => {
    const model = new ScriptedToolModel(script, { temperature: 0 });
    const selector = chatModelSelector({ model, tools: TOOLS, system: "You are a travel agent." });
    expect(selector.deterministic).toBe(false);
    const report = await evaluateSelection({ cases: CASES, selector, runs: 3 });
    expect(report.mode).toBe("chat-model");
    // A chat model picks and does not rank: no recall@k, no scores.
    expect(report.ranking).toBeUndefined();
    expect(report.noTool).toBeUndefined();
    expect(report.label).toBe("chat model scripted-tools".replace("scripted-tools", model.getName()));
    expect(report.warnings.filter((w) => w.includes("temperature"))).toEqual([]);
    const m = report.matrix;
    const at = (row: string | null, col: string | null) => m.counts[m.labels.indexOf(row)][m.labels.indexOf(col)];
    expect(at("get_weather", null)).toBe(3);
    expect(at(null, "get_weather")).toBe(1);
    expect(at(null, "set_reminder")).toBe(3);
    expect(at("book_hotel", "find_restaurant")).toBe(1);
    expect(report.agreement.disagreements.map((d) => d.turn)).toEqual([
      "book me a hotel room in oslo for two nights",
      "hello there",
    ]);
    // The diagnoses read this run's matrix, counted in cases (five cases: too few for a finding).
    expect(report.diagnoses).toEqual(diagnose({ matrix: m, runs: 3, mode: "chat-model" }));
    // The system prompt comes first, then the turn alone; the tools are bound as function definitions.
    expect(model.calls[0].map((m) => m.getType())).toEqual(["system", "human"]);
    expect(model.bound.map((t) => (t as { function: { name: string } }).function.name)).toEqual(
      TOOLS.map((t) => t.name),
    );
  });

  it("a rate limit is retried with backoff (or the provider's retry-after); a case that still fails is reported, not counted", async () => {
    const waits: number[] = [];
    const model = new ScriptedToolModel((turn, attempt) => {
      if (turn.includes("plane")) return attempt < 2 ? rateLimited() : "search_flights";
      if (turn.includes("hotel")) return attempt === 0 ? rateLimited(3) : "book_hotel";
      if (turn.includes("forecast")) return rateLimited();
      if (turn === "hello there") return new Error("socket hang up");
      return null;
    });
    const report = await evaluateSelection({
      cases: CASES,
      selector: chatModelSelector({ model, tools: TOOLS }),
      runs: 1,
      retries: 2,
      backoffMs: 100,
      random: () => 0.5,
      sleep: async (ms) => void waits.push(ms),
    });
    const outcome = (i: number) => report.cases[i].outcomes[0];
    expect(outcome(0)).toEqual({ tool: "search_flights" });
    expect(outcome(1)).toEqual({ tool: "book_hotel" });
    expect(outcome(2)).toEqual({ error: "rate limited after 2 retries: 429 Too Many Requests" });
    expect(outcome(3)).toEqual({ error: "socket hang up" });
    // Doubling from 100 ms with jitter 0.75: 75, 150; the provider asked for 3 s once.
    expect(waits.sort((a, b) => a - b)).toEqual([75, 75, 150, 150, 3000]);
    expect(report.accuracy).toMatchObject({ counted: 3, errored: 2 });
    expect(report.errors.map((e) => [e.turn, e.run])).toEqual([
      ["what's the weather forecast for perth", 1],
      ["hello there", 1],
    ]);
    // An errored run is not a miss: the weather row is empty.
    expect(report.perTool.find((t) => t.tool === "get_weather")).toBeUndefined();
  });

  it("keeps at most `concurrency` case runs in flight", async () => {
    const model = new ScriptedToolModel(() => "get_weather", { delayMs: 5 });
    const cases = toCases(Array.from({ length: 12 }, (_, i) => ({ turn: `weather ${i}`, expect: "get_weather" })));
    const report = await evaluateSelection({
      cases,
      selector: chatModelSelector({ model, tools: TOOLS }),
      runs: 2,
      concurrency: 3,
    });
    expect(model.maxInFlight).toBe(3);
    expect(report.accuracy.accuracy).toBe(1);
  });

  it("binds LangChain tools as they are, or as a view with the learned lines the model would be shown", async () => {
    const flights = tool(async () => "ok", {
      name: "search_flights",
      description: "Search flights.",
      schema: z.object({ to: z.string() }),
    });
    const hotel = tool(async () => "ok", {
      name: "book_hotel",
      description: "Book a hotel.",
      schema: z.object({ city: z.string() }),
    });
    const card = cardFromTool(flights, "x");
    const lesson: ToolCard = {
      ...card,
      learned: {
        ...card.learned,
        notFor: [{ text: "Not for trains; use book_train.", revisionId: "r1", tool: "book_train" }],
      },
    };
    const model = new ScriptedToolModel(() => null);
    chatModelSelector({ model, tools: [flights, hotel], lessons: [lesson] });
    const [boundFlights, boundHotel] = model.bound as { description: string; name: string; invoke: unknown }[];
    expect(boundHotel).toBe(hotel);
    expect(boundFlights.name).toBe("search_flights");
    expect(boundFlights.description).toBe("Search flights.\n\nLearned from use:\n- Not for trains; use book_train.");
    expect(flights.description).toBe("Search flights.");
  });

  it("warns about a temperature that is not 0, refuses a model that cannot bind tools", () => {
    const warm = chatModelSelector({ model: new ScriptedToolModel(() => null, { temperature: 0.7 }), tools: TOOLS });
    expect(warm.warnings).toEqual([expect.stringContaining("temperature is 0.7")]);
    const noTools = new ScriptedToolModel(() => null);
    Object.defineProperty(noTools, "bindTools", { value: undefined });
    expect(() => chatModelSelector({ model: noTools, tools: TOOLS })).toThrow(InvalidInput);
  });

  it("an aborted run stops the whole evaluation", async () => {
    const controller = new AbortController();
    const selector: Selector = {
      mode: "chat-model",
      label: "slow",
      tools: ["a"],
      warnings: [],
      select: async () => {
        controller.abort();
        throw new Error("aborted");
      },
    };
    await expect(
      evaluateSelection(
        { cases: toCases([{ turn: "x", expect: "a" }]), selector, ...noSleep },
        { signal: controller.signal },
      ),
    ).rejects.toThrow();
  });
});

describe("harness edges", () => {
  it("knows a rate limit when it sees one", () => {
    expect(isRateLimitError(rateLimited())).toBe(true);
    expect(isRateLimitError({ statusCode: 429 })).toBe(true);
    expect(isRateLimitError({ code: "rate_limit_exceeded" })).toBe(true);
    expect(isRateLimitError(Object.assign(new Error("x"), { name: "RateLimitError" }))).toBe(true);
    expect(isRateLimitError(new Error("Rate limit reached for requests"))).toBe(true);
    expect(isRateLimitError(new Error("invalid api key"))).toBe(false);
    expect(isRateLimitError("429")).toBe(false);
  });

  it("refuses bad options and empty inputs", async () => {
    const selector = await routerSelector({ tools: TOOLS });
    await expect(evaluateSelection({ cases: CASES, selector, runs: 0 })).rejects.toThrow(
      /runs must be an integer >= 1/,
    );
    await expect(evaluateSelection({ cases: [], selector })).rejects.toThrow(InvalidInput);
    await expect(routerSelector({ tools: [] })).rejects.toThrow(InvalidInput);
    await expect(routerSelector({ tools: [TOOLS[0], TOOLS[0]] })).rejects.toThrow(
      /Two tools are named "search_flights"/,
    );
  });

  it("a run saved as JSON reads back to the same figures", async () => {
    const model = new ScriptedToolModel((turn, attempt) =>
      turn.includes("hotel") && attempt === 1 ? "find_restaurant" : turn.includes("plane") ? "search_flights" : null,
    );
    const report = await evaluateSelection({
      cases: CASES,
      selector: chatModelSelector({ model, tools: TOOLS }),
      runs: 2,
    });
    const back = parseSelectionRun(JSON.parse(JSON.stringify(report)), "before.json");
    expect(back).toEqual(report);
    expect(() => parseSelectionRun({ mode: "router" }, "x.json")).toThrow(
      /^x\.json: not a saved run of `tool-lessons eval --json`/,
    );
  });
});

/** The synthetic eval requests as cases, with a category per tool family and folds 1 and 2. */
const SYNTHETIC = toCases(
  EVAL.map((e, i) => ({
    turn: e.query,
    expect: e.expect,
    fold: 1 + (i % 2),
    fields: { category: ["search_flights", "book_hotel", "get_weather"].includes(e.expect[0]) ? "travel" : "other" },
  })),
);

describe("recall@k, candidates, breakdowns and duplicates", () => {
  it("recall@k of the router's ranking at the k asked for, over the cases that need a tool", async () => {
    const selector = await routerSelector({ tools: TOOLS });
    const report = await evaluateSelection({ cases: [...SYNTHETIC, ...CASES.slice(3)], selector, k: [2, 1, 8] });
    expect(report.k).toEqual([1, 2, 8]);
    expect(report.ranking!.cases).toBe(SYNTHETIC.length);
    const [r1, r2, r8] = report.ranking!.recallAtK;
    expect([r1.k, r2.k, r8.k]).toEqual([1, 2, 8]);
    // recall@1 is the top pick's accuracy (no minScore); with every tool ranked, recall@8 is 1.
    const right = SYNTHETIC.filter((c, i) => c.expect.includes(report.cases[i].ranked![0])).length;
    expect(r1.recall).toBe(right / SYNTHETIC.length);
    expect(r1.recall).toBeLessThan(1);
    expect(r2.recall).toBeGreaterThanOrEqual(r1.recall);
    expect(r8.recall).toBe(1);
    expect(report.cases.every((c) => c.ranked!.length === 8)).toBe(true);
    await expect(evaluateSelection({ cases: CASES, selector, k: [0] })).rejects.toThrow(/k must be positive integers/);
  });

  it("a case with candidates is ranked among them only, through the one index (nothing rebuilt per case)", async () => {
    const selector = await routerSelector({ tools: TOOLS });
    const all = await evaluateSelection({ cases: SYNTHETIC, selector });
    const wrong = all.cases.filter((c) => !c.expect.includes((c.outcomes[0] as { tool: string }).tool));
    expect(wrong.length).toBeGreaterThan(2);
    // Each wrong case gets its expected tool and two tools it did not pick as candidates.
    const cases = toCases(
      wrong.map((c) => {
        const picked = (c.outcomes[0] as { tool: string }).tool;
        const others = TOOLS.map((t) => t.name).filter((n) => n !== picked && !c.expect.includes(n));
        return { turn: c.turn, expect: c.expect, candidates: [...c.expect, others[0], others[1]] };
      }),
    );
    const reindex = vi.spyOn(ToolIndex.prototype, "reindex");
    try {
      const among = await evaluateSelection({ cases, selector });
      expect(reindex).not.toHaveBeenCalled();
      expect(among.amongCandidates).toBe(cases.length);
      among.cases.forEach((c, i) => {
        expect(c.candidates).toEqual(cases[i].candidates);
        expect(c.ranked!.every((t) => cases[i].candidates!.includes(t))).toBe(true);
        expect(c.ranked).toHaveLength(3);
      });
      // Among three candidates, recall@3 is 1 by construction; the top pick improved on every tool.
      expect(among.ranking!.recallAtK.find((r) => r.k === 3)!.recall).toBe(1);
      expect(among.accuracy.accuracy!).toBeGreaterThan(0);
      // ignoreCandidates routes among all the tools again: every case wrong as before.
      const ignored = await evaluateSelection({ cases, selector, ignoreCandidates: true });
      expect(ignored.amongCandidates).toBeUndefined();
      expect(ignored.accuracy.accuracy).toBe(0);
      expect(ignored.cases[0].candidates).toBeUndefined();
    } finally {
      reindex.mockRestore();
    }
  });

  it("refuses candidates the selector does not have, or that leave out an expected tool", async () => {
    const selector = await routerSelector({ tools: TOOLS });
    const cases = toCases([{ turn: "x", expect: "book_hotel", candidates: ["book_hotel", "teleport"] }]);
    await expect(evaluateSelection({ cases, selector })).rejects.toThrow(
      'evaluateSelection: case case 1 names candidate "teleport", which is not one of the tools.',
    );
    const outside = [{ id: "c", turn: "x", expect: ["book_hotel"], candidates: ["get_weather"] }];
    await expect(evaluateSelection({ cases: outside, selector })).rejects.toThrow(
      /expects "book_hotel", which is not among its candidates/,
    );
  });

  it("a chat model is bound to a case's candidates only, once per candidate list", async () => {
    const bindings: string[][] = [];
    const model = new ScriptedToolModel((turn) => (turn.includes("plane") ? "search_flights" : null));
    const bindTools = model.bindTools.bind(model);
    model.bindTools = (tools) => {
      bindings.push(tools.map((t) => (t as { function: { name: string } }).function.name));
      return bindTools(tools);
    };
    const selector = chatModelSelector({ model, tools: TOOLS });
    const cases = toCases([
      { turn: "a plane to lima", expect: "search_flights", candidates: ["search_flights", "book_hotel"] },
      { turn: "a plane to oslo", expect: "search_flights", candidates: ["book_hotel", "search_flights"] },
      { turn: "hi", expect: null, candidates: ["get_weather"] },
    ]);
    const report = await evaluateSelection({ cases, selector });
    expect(report.runs).toBe(3);
    expect(bindings).toEqual([TOOLS.map((t) => t.name), ["search_flights", "book_hotel"], ["get_weather"]]);
    expect(report.accuracy.accuracy).toBe(1);
  });

  it("breaks accuracy, recall@k and the no-tool figures down by a case field", async () => {
    const cases = [...SYNTHETIC, ...toCases([{ turn: "hello there", expect: null, fields: { category: "chat" } }])];
    const report = await evaluateSelection({
      cases,
      selector: await routerSelector({ tools: TOOLS, minScore: 0.2 }),
      by: ["category", "fold"],
    });
    const [category, fold] = report.breakdowns!;
    expect(category.field).toBe("category");
    expect(category.values.map((v) => [v.value, v.cases])).toEqual([
      ["other", 15],
      ["travel", 9],
      ["chat", 1],
    ]);
    const travel = category.values.find((v) => v.value === "travel")!;
    const travelCases = report.cases.filter((c) => c.fields?.category === "travel");
    const right = travelCases.filter((c) => c.expect.includes((c.outcomes[0] as { tool: string }).tool ?? "")).length;
    expect(travel.accuracy).toBe(right / 9);
    expect(travel.ranking!.cases).toBe(9);
    expect(travel.noTool).toMatchObject({ threshold: 0.2 });
    expect(category.values.find((v) => v.value === "chat")).toMatchObject({ noToolCases: 1, accuracy: 1 });
    expect(fold.values.map((v) => v.value).sort()).toEqual(["(none)", "1", "2"]);
    // A saved run reads back to the same breakdowns when asked for them.
    const back = parseSelectionRun(JSON.parse(JSON.stringify(report)), "run.json", { by: ["category", "fold"] });
    expect(back).toEqual(report);
  });

  it("two identical tools are diagnosed as duplicates to merge or rename, not as a dense pair", async () => {
    const copy = {
      ...TOOLS[0],
      name: "flight_search",
      description: "Search airline flights between two  airports on a date",
    };
    const tools = [...TOOLS, copy];
    const cases = toCases(
      EVAL.filter((e) => e.expect[0] === "search_flights").map((e) => ({ turn: e.query, expect: e.expect })),
    );
    const report = await evaluateSelection({ cases, selector: await routerSelector({ tools }) });
    expect(report.duplicates).toEqual([["flight_search", "search_flights"]]);
    const kinds = report.diagnoses.map((d) => d.kind);
    expect(kinds).toContain("duplicate_tools");
    expect(report.diagnoses.some((d) => d.kind === "dense_pair" && d.tools.includes("flight_search"))).toBe(false);
    const dup = report.diagnoses.find((d) => d.kind === "duplicate_tools")!;
    expect(dup.tools).toEqual(["flight_search", "search_flights"]);
    expect(dup.fix).toMatch(/^Merge them into one tool/);
    // The copies did take each other's turns: without knowing them for copies, this is a dense pair.
    expect(dup.errors).toBeGreaterThan(1);
    expect(diagnose({ matrix: report.matrix, runs: 1, mode: "router" }).map((d) => [d.kind, d.tools])).toContainEqual([
      "dense_pair",
      ["search_flights", "flight_search"],
    ]);
    // The chat model's selector finds the same copies.
    expect(chatModelSelector({ model: new ScriptedToolModel(() => null), tools }).duplicates).toEqual([
      ["flight_search", "search_flights"],
    ]);
  });
});
