import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { DynamicStructuredTool, DynamicTool, StructuredTool, tool } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod/v3";
import { InvalidInput } from "../../src/errors.js";
import {
  authorFingerprint,
  cardFromTool,
  exampleSources,
  LEARNED_HEADING,
  modelDescription,
  routingText,
  routingTexts,
  withDescriptions,
} from "../../src/ledger/cards.js";
import type { ToolCard } from "../../src/ledger/schema.js";
import { DEFAULT_SETTINGS } from "../../src/settings.js";

const lookupClaim = tool(async ({ claimRef }) => `claim ${claimRef}`, {
  name: "lookup_claim",
  description: "Look up an insurance claim by its reference.\n",
  schema: z.object({ claimRef: z.string().describe("e.g. CW-123456"), includeNotes: z.boolean().optional() }),
});

/** A card with something of every learned kind. */
function learnedCard(): ToolCard {
  const card = cardFromTool(lookupClaim, "default", 1_000);
  return {
    ...card,
    augmented: { description: "Find a claim and see where it stands", at: 1_000 },
    learned: {
      examples: [
        { text: "where is my claim at", source: "synthetic", addedAt: 1_000 },
        { text: "status of the windscreen job", source: "learned", revisionId: "r1", addedAt: 2_000 },
        { text: "hand-typed by ops", source: "unknown", addedAt: 1_500 },
      ],
      notes: [{ text: "Pass claimRef with its CW- prefix.", revisionId: "r1" }],
      notFor: [{ text: "Not for large loss referrals; use refer_llu.", tool: "refer_llu", revisionId: "r1" }],
      exampleCall: { text: 'Example call: {"claimRef": "CW-######"}', revisionId: "r1" },
    },
  };
}

describe("cardFromTool", () => {
  it("takes name, the author's description as written and the JSON schema of a zod 4 tool", () => {
    const card = cardFromTool(lookupClaim, "tenant-a", 42);
    expect(card.name).toBe("lookup_claim");
    expect(card.partition).toBe("tenant-a");
    expect(card.author.description).toBe("Look up an insurance claim by its reference.\n");
    expect(card.author.argNames).toEqual(["claimRef", "includeNotes"]);
    expect(card.author.schema).toMatchObject({
      type: "object",
      properties: { claimRef: { type: "string", description: "e.g. CW-123456" }, includeNotes: { type: "boolean" } },
      required: ["claimRef"],
    });
    expect(card.augmented).toBeNull();
    expect(card.learned).toEqual({ examples: [], notes: [], notFor: [], exampleCall: null });
    expect(card.createdAt).toBe(42);
  });

  it("converts a zod 3-style schema", () => {
    const legacy = new DynamicStructuredTool({
      name: "send_email",
      description: "Send an email.",
      schema: z3.object({ to: z3.string(), subject: z3.string(), body: z3.string().optional() }),
      func: async () => "sent",
    });
    const card = cardFromTool(legacy, "default", 1);
    expect(card.author.argNames).toEqual(["to", "subject", "body"]);
    expect(card.author.schema).toMatchObject({ type: "object", required: ["to", "subject"] });
  });

  it("keeps a plain JSON schema (MCP-adapter tools) as it is", () => {
    const schema = {
      type: "object",
      properties: { repo: { type: "string" }, title: { type: "string" }, labels: { type: "array", items: { type: "string" } } },
      required: ["repo", "title"],
    };
    const mcp = new DynamicStructuredTool({
      name: "github.create_issue",
      description: "Create a GitHub issue.",
      schema,
      func: async () => "ok",
    });
    const card = cardFromTool(mcp, "default", 1);
    expect(card.name).toBe("github.create_issue");
    expect(card.author.schema).toEqual(schema);
    expect(card.author.argNames).toEqual(["repo", "title", "labels"]);
  });

  it("handles a StructuredTool subclass and a string-input DynamicTool", () => {
    class Weather extends StructuredTool {
      name = "get_weather";
      description = "Current weather for a city.";
      schema = z.object({ city: z.string() });
      async _call({ city }: { city: string }) {
        return `sunny in ${city}`;
      }
    }
    expect(cardFromTool(new Weather(), "default", 1).author.argNames).toEqual(["city"]);
    const dyn = new DynamicTool({ name: "echo", description: "Echo text.", func: async (s) => s });
    expect(cardFromTool(dyn, "default", 1).author.argNames).toEqual(["input"]);
  });

  it("keeps an empty description as empty and a missing schema as null", () => {
    const card = cardFromTool({ name: "bare" }, "default", 1);
    expect(card.author).toEqual({ description: "", argNames: [], schema: null });
  });

  it("refuses a blank name or partition", () => {
    expect(() => cardFromTool({ name: " ", description: "x" }, "default")).toThrow(InvalidInput);
    expect(() => cardFromTool({ name: "ok", description: "x" }, "")).toThrow(InvalidInput);
  });
});

describe("authorFingerprint", () => {
  it("is the same for the same tool registered twice, and ignores key order in the schema", () => {
    expect(authorFingerprint(cardFromTool(lookupClaim, "a", 1))).toBe(authorFingerprint(cardFromTool(lookupClaim, "b", 2)));
    const one = cardFromTool({ name: "t", description: "d", schema: { type: "object", properties: { a: { type: "string" } } } }, "p");
    const two = cardFromTool({ name: "t", description: "d", schema: { properties: { a: { type: "string" } }, type: "object" } }, "p");
    expect(authorFingerprint(one)).toBe(authorFingerprint(two));
  });

  it("changes when the docstring or the schema changes, not when something is learned", () => {
    const base = cardFromTool(lookupClaim, "p", 1);
    expect(authorFingerprint({ author: { ...base.author, description: "Look up a claim." } })).not.toBe(authorFingerprint(base));
    expect(authorFingerprint({ author: { ...base.author, schema: { type: "object" } } })).not.toBe(authorFingerprint(base));
    expect(authorFingerprint(learnedCard())).toBe(authorFingerprint(base));
  });
});

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
    const card = cardFromTool({ name: "fs/readFile", description: "Read a file.", schema: { type: "object", properties: { path: {} } } }, "p");
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

describe("modelDescription", () => {
  it("is the author's description, exactly, when nothing was learned (even when augmented)", () => {
    const card = { ...cardFromTool(lookupClaim, "p", 1), augmented: { description: "Find a claim", at: 1 } };
    expect(modelDescription(card)).toBe("Look up an insurance claim by its reference.\n");
  });

  it("shows the augmented description only when the author wrote none", () => {
    const card = { ...cardFromTool({ name: "t" }, "p", 1), augmented: { description: "Find a claim", at: 1 } };
    expect(modelDescription(card)).toBe("Find a claim");
  });

  it("adds learned lines under one heading, each on its own line, byte-stable", () => {
    const card = learnedCard();
    const expected = [
      "Look up an insurance claim by its reference.",
      "",
      LEARNED_HEADING,
      "- Pass claimRef with its CW- prefix.",
      "- Not for large loss referrals; use refer_llu.",
      '- Example call: {"claimRef": "CW-######"}',
    ].join("\n");
    expect(modelDescription(card)).toBe(expected);
    expect(modelDescription(structuredClone(card))).toBe(expected);
    expect(modelDescription(card)).not.toContain("Find a claim");
  });

  it("hides example requests unless showLearnedExamples, and then shows only learned ones", () => {
    const card = learnedCard();
    expect(modelDescription(card)).not.toContain("windscreen");
    const shown = modelDescription(card, { ...DEFAULT_SETTINGS, showLearnedExamples: true });
    expect(shown).toContain('- Also asked for as: "status of the windscreen job"');
    expect(shown).not.toContain("where is my claim at");
    expect(shown).not.toContain("hand-typed");
  });

  it("has no heading when only hidden examples were learned", () => {
    const card = cardFromTool(lookupClaim, "p", 1);
    card.learned.examples.push({ text: "windscreen status", source: "learned", addedAt: 1 });
    expect(modelDescription(card)).toBe(card.author.description);
  });

  it("prefixes an example call stored without its label", () => {
    const card = cardFromTool(lookupClaim, "p", 1);
    card.learned.exampleCall = { text: '{"claimRef": "CW-######"}', revisionId: "r" };
    expect(modelDescription(card)).toContain('- Example call: {"claimRef": "CW-######"}');
  });
});

describe("exampleSources", () => {
  it("reports each example's stored source", () => {
    expect(exampleSources(learnedCard()).map((e) => [e.text, e.source])).toEqual([
      ["where is my claim at", "synthetic"],
      ["status of the windscreen job", "learned"],
      ["hand-typed by ops", "unknown"],
    ]);
    expect(exampleSources(learnedCard())[1]).toMatchObject({ revisionId: "r1", addedAt: 2_000 });
  });

  it("reads rows without markers: synthetic when the description differs from the docstring", () => {
    const legacy = {
      name: "t",
      author: { description: "Look up a claim." },
      augmented: { description: "Find where a claim stands" },
      learned: { examples: [{ text: "claim status" }, "is my claim done", { text: "odd", source: "made-up" }, 7, { nope: 1 }] },
    };
    expect(exampleSources(legacy)).toEqual([
      { text: "claim status", source: "synthetic" },
      { text: "is my claim done", source: "synthetic" },
      { text: "odd", source: "synthetic" },
    ]);
  });

  it("counts unmarked examples as unknown when the row was not augmented", () => {
    const same = { author: { description: "Look up a claim." }, augmented: { description: "Look up a claim." }, learned: { examples: ["a"] } };
    const none = { author: { description: "x" }, learned: { examples: [{ text: "b" }] } };
    expect(exampleSources(same)).toEqual([{ text: "a", source: "unknown" }]);
    expect(exampleSources(none)).toEqual([{ text: "b", source: "unknown" }]);
    expect(exampleSources({ garbage: true })).toEqual([]);
  });
});

class ToolRuns extends BaseCallbackHandler {
  name = "tool-runs";
  starts: { serialized: string; runName?: string }[] = [];
  override async handleToolStart(
    tool: Serialized,
    _input: string,
    _runId: string,
    _parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    runName?: string,
  ) {
    this.starts.push({ serialized: JSON.stringify(tool), runName });
  }
}

describe("withDescriptions", () => {
  it("re-describes tools for the model while ToolNode runs the original, under its own name", async () => {
    const seen: string[] = [];
    const original = tool(
      async ({ claimRef }) => {
        seen.push(claimRef);
        return `claim ${claimRef} is open`;
      },
      { name: "lookup_claim", description: "Look up an insurance claim by its reference.\n", schema: z.object({ claimRef: z.string() }) },
    );
    const other = tool(async () => "pong", { name: "ping", description: "Ping.", schema: z.object({}) });
    const card = learnedCard();
    const [view, untouched] = withDescriptions([original, other], [card]);

    expect(untouched).toBe(other);
    expect(view).not.toBe(original);
    expect(view.name).toBe("lookup_claim");
    expect(view.description).toBe(modelDescription(card));
    expect(original.description).toBe("Look up an insurance claim by its reference.\n");
    expect(view).toBeInstanceOf(StructuredTool);
    expect(view.schema).toBe(original.schema);

    const bound = convertToOpenAITool(view);
    expect(bound.function.name).toBe("lookup_claim");
    expect(bound.function.description).toBe(modelDescription(card));
    expect(bound.function.parameters).toEqual(convertToOpenAITool(original).function.parameters);

    const runs = new ToolRuns();
    const node = new ToolNode([view, untouched]);
    const call = new AIMessage({
      content: "",
      tool_calls: [{ id: "call-1", name: "lookup_claim", args: { claimRef: "CW-123456" }, type: "tool_call" }],
    });
    const out = (await node.invoke({ messages: [call] }, { callbacks: [runs] })) as { messages: ToolMessage[] };
    expect(seen).toEqual(["CW-123456"]);
    expect(out.messages).toHaveLength(1);
    expect(out.messages[0].content).toBe("claim CW-123456 is open");
    expect(out.messages[0].name).toBe("lookup_claim");
    expect(runs.starts).toHaveLength(1);
    expect(runs.starts[0].runName).toBe("lookup_claim");
    const direct = new ToolRuns();
    await original.invoke({ claimRef: "CW-1" }, { callbacks: [direct] });
    expect(runs.starts[0].serialized).toBe(direct.starts[0].serialized);
  });

  it("returns the tool itself when there is nothing to add, and accepts a map of cards", () => {
    const card = cardFromTool(lookupClaim, "p", 1);
    const [same] = withDescriptions([lookupClaim], new Map([[card.name, card]]));
    expect(same).toBe(lookupClaim);
  });

  it("keeps the tool's current docstring when the card is older", () => {
    const card = { ...learnedCard(), author: { ...learnedCard().author, description: "Old words." } };
    const [view] = withDescriptions([lookupClaim], [card]);
    expect(view.description.startsWith("Look up an insurance claim by its reference.\n\nLearned from use:")).toBe(true);
  });

  it("shows learned examples only with showLearnedExamples", () => {
    const [hidden] = withDescriptions([lookupClaim], [learnedCard()]);
    const [shown] = withDescriptions([lookupClaim], [learnedCard()], { showLearnedExamples: true });
    expect(hidden.description).not.toContain("windscreen");
    expect(shown.description).toContain("windscreen");
  });
});
