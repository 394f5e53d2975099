import { describe, expect, it } from "vitest";
import { cardFromTool } from "../../src/ledger/cards.js";
import { routingText, routingTexts } from "../../src/routing/routing-text.js";
import { learnedCard } from "../helpers/cards.js";

describe("routingText", () => {
  it("holds the name and its words, the augmented description, argument names and every example", () => {
    const card = learnedCard();
    const text = routingText(card);
    expect(text).toContain("lookup_claim");
    expect(text).toContain("lookup claim");
    expect(text).toContain("Find a claim and see where it stands");
    expect(text).not.toContain("Look up an insurance claim");
    expect(text).toContain("claim ref");
    expect(text).toContain("include notes");
    for (const example of card.learned.examples) expect(text).toContain(example.text);
  });

  it("never holds usage notes, Not-for lines or the example call", () => {
    const text = routingText(learnedCard());
    expect(text).not.toMatch(/prefix/i);
    expect(text).not.toMatch(/Not for/);
    expect(text).not.toMatch(/refer_llu|large loss/);
    expect(text).not.toMatch(/Example call|CW-#/);
  });

  it("falls back to the author's description and splits MCP-style names", () => {
    const card = cardFromTool(
      { name: "fs/readFile", description: "Read a file.", schema: { type: "object", properties: { path: {} } } },
      "p",
    );
    expect(routingTexts(card)).toEqual({ tool: "fs/readFile\nfs read file\nRead a file.\npath", examples: [] });
  });

  it("gives one part per example, trimmed and without repeats", () => {
    const card = learnedCard();
    card.learned.examples.push({ text: "  Where is my claim at ", source: "learned", addedAt: 3 });
    const parts = routingTexts(card);
    expect(parts.examples).toEqual(["where is my claim at", "status of the windscreen job", "hand-typed by ops"]);
    expect(parts.tool).not.toContain("where is my claim");
    expect(routingText(card)).toBe([parts.tool, ...parts.examples].join("\n"));
  });
});
