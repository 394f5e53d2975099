import { describe, expect, it } from "vitest";
import {
  casesInFolds,
  checkCaseTools,
  editDistance,
  nearestNames,
  parseCases,
  parseToolLines,
  toCases,
} from "../../src/evaluate/cases.js";
import { InvalidInput } from "../../src/errors.js";

const lines = (...rows: unknown[]): string =>
  rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n");

function thrown(fn: () => unknown): InvalidInput {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInput);
    return error as InvalidInput;
  }
  throw new Error("expected InvalidInput");
}

describe("case files", () => {
  it("reads every form of expect: a name, a list, null, [] (no tool), and MetaTool's query", () => {
    const cases = parseCases(
      lines(
        { turn: "where's my order 90210", expect: "get_order_status" },
        "",
        { turn: " how do refunds work ", expect: ["search_docs", "search_kb", "search_docs"] },
        { turn: "hi", expect: null },
        { query: "thanks!", expect: [], id: 7, source: "negative", fold: 3 },
      ),
      "cases.jsonl",
    );
    expect(cases).toEqual([
      { id: "line 1", turn: "where's my order 90210", expect: ["get_order_status"], line: 1 },
      { id: "line 3", turn: "how do refunds work", expect: ["search_docs", "search_kb"], line: 3 },
      { id: "line 4", turn: "hi", expect: [], line: 4 },
      {
        id: "7",
        turn: "thanks!",
        expect: [],
        line: 5,
        fold: 3,
        fields: { source: "negative", fold: "3" },
      },
    ]);
  });

  it("names the file and line of the first bad line, and what is wrong with it", () => {
    let e = thrown(() =>
      parseCases(
        lines({ turn: "a", expect: "x" }, "", '{"turn": "b", "expect":', { turn: "c", expect: "y" }),
        "c.jsonl",
      ),
    );
    expect(e.message).toMatch(/^c\.jsonl:3: not valid JSON/);
    expect(e.context).toMatchObject({ file: "c.jsonl", line: 3 });
    e = thrown(() => parseCases(lines({ turn: "a", expect: "x" }, { expect: "x" }), "c.jsonl"));
    expect(e.message).toMatch(/^c\.jsonl:2: "turn": needs a non-empty "turn" \(or "query"\)/);
    e = thrown(() => parseCases(lines({ turn: "a", expect: 3 }), "c.jsonl"));
    expect(e.message).toMatch(/^c\.jsonl:1: "expect"/);
    e = thrown(() => parseCases(lines({ turn: "a", expect: "  " }), "c.jsonl"));
    expect(e.message).toMatch(/^c\.jsonl:1: "expect"/);
    e = thrown(() => parseCases("\n\n", "empty.jsonl"));
    expect(e.message).toContain("has no cases");
  });

  it("refuses a case that expects a tool not given, naming its line and the near name", () => {
    const cases = parseCases(
      lines({ turn: "a", expect: "search_docs" }, { turn: "b", expect: "serch_docs" }, { turn: "c", expect: "nope" }),
      "c.jsonl",
    );
    const e = thrown(() => checkCaseTools(cases, ["search_docs", "search_kb"], "c.jsonl"));
    expect(e.message).toBe(
      'c.jsonl:2: expects tool "serch_docs", which is not among the 2 tools given (2 cases name unknown tools). Did you mean "search_docs"? Fix the label or add the tool.',
    );
    expect(() => checkCaseTools(cases.slice(0, 1), ["search_docs"])).not.toThrow();
  });

  it("cases from objects are checked like a file's", () => {
    expect(
      toCases([
        { turn: "hi", expect: null },
        { turn: "x", expect: ["a"] },
      ]),
    ).toEqual([
      { id: "case 1", turn: "hi", expect: [] },
      { id: "case 2", turn: "x", expect: ["a"] },
    ]);
    expect(() => toCases([{ turn: " ", expect: null }])).toThrow(/case 1: "turn"/);
  });
});

describe("tool files", () => {
  it("reads MetaTool lines, drops other fields, refuses a repeated name naming both lines", () => {
    expect(
      parseToolLines(
        lines({ name: "a", description: "A.", parameters: null, name_for_human: "A" }, { name: "b" }),
        "t.jsonl",
      ),
    ).toEqual([
      { name: "a", description: "A.", parameters: null },
      { name: "b", description: "" },
    ]);
    expect(thrown(() => parseToolLines(lines({ name: "a" }, { name: "b" }, { name: "a" }), "t.jsonl")).message).toBe(
      't.jsonl:3: tool "a" is already defined on line 1; names must be unique.',
    );
    expect(thrown(() => parseToolLines(lines({ name: "" }), "t.jsonl")).message).toMatch(
      /^t\.jsonl:1: "name": a tool needs a non-empty name/,
    );
  });
});

describe("near names", () => {
  it("edit distance and the did-you-mean of a typo", () => {
    expect(editDistance("minMises", "minMisses")).toBe(1);
    expect(editDistance("", "abc")).toBe(3);
    expect(nearestNames("minMises", ["minCalls", "minMisses", "maxNotes"])).toEqual(["minMisses"]);
    expect(nearestNames("min-misses", ["minMisses"])).toEqual(["minMisses"]);
    expect(nearestNames("frobnicate", ["minCalls", "minMisses"])).toEqual([]);
    // Short names allow one edit only: "ab" is not "xy".
    expect(nearestNames("ab", ["xy", "ac"])).toEqual(["ac"]);
  });
});

describe("candidates, folds and fields of a case", () => {
  it("keeps a case's own candidate list, its fold, and its other scalar fields as text", () => {
    const [c] = parseCases(
      lines({
        turn: "fly me to lima",
        expect: "search_flights",
        candidates: ["book_hotel", " search_flights "],
        fold: 2,
        category: "travel",
        hard: true,
        score: 0.5,
        tags: ["a"],
        meta: { x: 1 },
      }),
      "c.jsonl",
    );
    expect(c).toEqual({
      id: "line 1",
      turn: "fly me to lima",
      expect: ["search_flights"],
      line: 1,
      candidates: ["book_hotel", "search_flights"],
      fold: 2,
      // Lists and objects are not breakdown values.
      fields: { category: "travel", hard: "true", score: "0.5", fold: "2" },
    });
  });

  it("refuses candidates that leave out the expected tool, are empty, blank or repeated, and a fold that is not an integer", () => {
    const bad = (line: unknown) => thrown(() => parseCases(lines(line), "c.jsonl")).message;
    expect(bad({ turn: "a", expect: "x", candidates: ["y", "z"] })).toMatch(
      /^c\.jsonl:1: "candidates": must hold every tool of "expect"/,
    );
    expect(bad({ turn: "a", expect: null, candidates: [] })).toMatch(/"candidates": needs at least one tool/);
    expect(bad({ turn: "a", expect: null, candidates: ["x", " "] })).toMatch(/"candidates\.1": a candidate tool name/);
    expect(bad({ turn: "a", expect: "x", candidates: ["x", "x"] })).toMatch(/"candidates": names a tool twice/);
    expect(bad({ turn: "a", expect: "x", fold: 1.5 })).toMatch(/^c\.jsonl:1: "fold"/);
    expect(bad({ turn: "a", expect: "x", fold: "1" })).toMatch(/^c\.jsonl:1: "fold"/);
    // A no-tool case may carry candidates: it is routed among them and should pick none.
    expect(parseCases(lines({ turn: "hi", expect: null, candidates: ["x"] }), "c.jsonl")[0].candidates).toEqual(["x"]);
  });

  it("checks candidates against the tools like expected tools, with a near name", () => {
    const cases = parseCases(
      lines({ turn: "a", expect: "x" }, { turn: "b", expect: "x", candidates: ["x", "serch_docs"] }),
      "c.jsonl",
    );
    expect(thrown(() => checkCaseTools(cases, ["x", "search_docs"], "c.jsonl")).message).toBe(
      'c.jsonl:2: names candidate "serch_docs", which is not among the 2 tools given. Did you mean "search_docs"? Fix the label or add the tool.',
    );
  });

  it("filters by folds, naming a case without one, or the folds present when none matches", () => {
    const cases = parseCases(
      lines(
        { turn: "a", expect: "x", fold: 1 },
        { turn: "b", expect: "x", fold: 2 },
        { turn: "c", expect: null, fold: 3 },
      ),
      "c.jsonl",
    );
    expect(casesInFolds(cases, [1, 3], "c.jsonl").map((c) => c.turn)).toEqual(["a", "c"]);
    expect(thrown(() => casesInFolds(cases, [4], "c.jsonl")).message).toBe(
      "no case of c.jsonl is in folds 4; its folds are 1, 2, 3.",
    );
    const unfolded = parseCases(lines({ turn: "a", expect: "x", fold: 1 }, { turn: "b", expect: "x" }), "u.jsonl");
    expect(thrown(() => casesInFolds(unfolded, [1], "u.jsonl")).message).toBe(
      'u.jsonl:2: no "fold" field; filtering by folds needs one on every case.',
    );
  });

  it("API cases carry candidates, folds and fields too, checked the same way", () => {
    expect(
      toCases([{ turn: "a", expect: "x", candidates: ["x", "y"], fold: 1, fields: { category: "c", n: 2 } }]),
    ).toEqual([
      {
        id: "case 1",
        turn: "a",
        expect: ["x"],
        candidates: ["x", "y"],
        fold: 1,
        fields: { category: "c", n: "2", fold: "1" },
      },
    ]);
    expect(() => toCases([{ turn: "a", expect: "x", candidates: ["y"] }])).toThrow(/case 1: "candidates": must hold/);
  });
});
