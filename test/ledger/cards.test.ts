import { DynamicStructuredTool, DynamicTool, StructuredTool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod/v3";
import { InvalidInput } from "../../src/errors.js";
import { authorFingerprint, cardFromTool, exampleSources } from "../../src/ledger/cards.js";
import { learnedCard, lookupClaim } from "../helpers/cards.js";

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
      properties: {
        repo: { type: "string" },
        title: { type: "string" },
        labels: { type: "array", items: { type: "string" } },
      },
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
    expect(authorFingerprint(cardFromTool(lookupClaim, "a", 1))).toBe(
      authorFingerprint(cardFromTool(lookupClaim, "b", 2)),
    );
    const one = cardFromTool(
      { name: "t", description: "d", schema: { type: "object", properties: { a: { type: "string" } } } },
      "p",
    );
    const two = cardFromTool(
      { name: "t", description: "d", schema: { properties: { a: { type: "string" } }, type: "object" } },
      "p",
    );
    expect(authorFingerprint(one)).toBe(authorFingerprint(two));
  });

  it("changes when the docstring or the schema changes, not when something is learned", () => {
    const base = cardFromTool(lookupClaim, "p", 1);
    expect(authorFingerprint({ author: { ...base.author, description: "Look up a claim." } })).not.toBe(
      authorFingerprint(base),
    );
    expect(authorFingerprint({ author: { ...base.author, schema: { type: "object" } } })).not.toBe(
      authorFingerprint(base),
    );
    expect(authorFingerprint(learnedCard())).toBe(authorFingerprint(base));
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
      learned: {
        examples: [{ text: "claim status" }, "is my claim done", { text: "odd", source: "made-up" }, 7, { nope: 1 }],
      },
    };
    expect(exampleSources(legacy)).toEqual([
      { text: "claim status", source: "synthetic" },
      { text: "is my claim done", source: "synthetic" },
      { text: "odd", source: "synthetic" },
    ]);
  });

  it("counts unmarked examples as unknown when the row was not augmented", () => {
    const same = {
      author: { description: "Look up a claim." },
      augmented: { description: "Look up a claim." },
      learned: { examples: ["a"] },
    };
    const none = { author: { description: "x" }, learned: { examples: [{ text: "b" }] } };
    expect(exampleSources(same)).toEqual([{ text: "a", source: "unknown" }]);
    expect(exampleSources(none)).toEqual([{ text: "b", source: "unknown" }]);
    expect(exampleSources({ garbage: true })).toEqual([]);
  });
});
