/** The kept tool set's pure functions: growing only by appending, frozen descriptions, search answers. */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { foundBySearch, growKept, keptBinding, keptForCall, SEARCH_TOOLS_NAME } from "../../src/serve/tool-set.js";

const describe1 = (name: string) => `about ${name}`;

describe("growKept", () => {
  it("appends new names in the order they came, keeps the old ones where and as they were", () => {
    let kept = growKept([], ["b", "a"], describe1);
    expect(kept).toEqual([
      { name: "b", description: "about b" },
      { name: "a", description: "about a" },
    ]);
    kept = growKept(kept, ["c", "a", "b"], (n) => `new ${n}`);
    expect(kept).toEqual([
      { name: "b", description: "about b" },
      { name: "a", description: "about a" },
      { name: "c", description: "new c" },
    ]);
  });

  it("returns the same set when nothing is added, and skips unknown names", () => {
    const kept = growKept([], ["a"], describe1);
    expect(growKept(kept, ["a"], describe1)).toBe(kept);
    expect(growKept(kept, ["zzz"], describe1, new Set(["a"]))).toBe(kept);
  });

  it("over many random turns, every set is a prefix of the next", () => {
    const names = Array.from({ length: 20 }, (_, i) => `t${i}`);
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % names.length;
    let kept = growKept([], [], describe1);
    for (let turn = 0; turn < 200; turn++) {
      const routed = [names[next()], names[next()], names[next()]];
      const grown = growKept(kept, routed, (n) => `turn ${turn} ${n}`);
      expect(grown.slice(0, kept.length)).toEqual(kept);
      for (const r of routed) expect(grown.map((t) => t.name)).toContain(r);
      kept = grown;
    }
  });
});

describe("foundBySearch and keptForCall", () => {
  const answer = (found: { name: string; description: string }[], id: string) =>
    new ToolMessage({ content: "Found", tool_call_id: id, name: SEARCH_TOOLS_NAME, artifact: { found } });

  it("reads only this turn's search_tools answers, and adds only known tools after the turn's own", () => {
    const messages = [
      new HumanMessage("first"),
      answer([{ name: "old", description: "old one" }], "1"),
      new HumanMessage("second"),
      new AIMessage("…"),
      answer(
        [
          { name: "x", description: "x as found" },
          { name: "nope", description: "?" },
        ],
        "2",
      ),
      new ToolMessage({
        content: "fake",
        tool_call_id: "3",
        name: "other",
        artifact: { found: [{ name: "y", description: "" }] },
      }),
    ];
    expect(foundBySearch(messages).map((t) => t.name)).toEqual(["x", "nope"]);
    const kept = keptForCall(
      [{ name: "a", description: "A" }],
      ["b"],
      describe1,
      messages,
      new Set(["a", "b", "x", "old", "y"]),
    );
    expect(kept).toEqual([
      { name: "a", description: "A" },
      { name: "b", description: "about b" },
      { name: "x", description: "x as found" },
    ]);
  });

  it("binds search_tools first, then the kept tools as first described", () => {
    const tools = [
      { name: "a", description: "A" },
      { name: "b", description: "B" },
    ];
    const search = { name: SEARCH_TOOLS_NAME, description: "find" };
    const bound = keptBinding(
      [
        { name: "b", description: "B, learned" },
        { name: "a", description: "A" },
      ],
      tools,
      [search],
    );
    expect(bound.map((t) => [t.name, t.description])).toEqual([
      [SEARCH_TOOLS_NAME, "find"],
      ["b", "B, learned"],
      ["a", "A"],
    ]);
    expect(bound[2]).toBe(tools[0]);
  });
});
