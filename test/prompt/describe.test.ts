import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { StructuredTool, tool } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { cardFromTool } from "../../src/ledger/cards.js";
import { LEARNED_HEADING, modelDescription, withDescriptions } from "../../src/prompt/describe.js";
import { DEFAULT_SETTINGS } from "../../src/settings.js";
import { learnedCard, lookupClaim } from "../helpers/cards.js";

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
      {
        name: "lookup_claim",
        description: "Look up an insurance claim by its reference.\n",
        schema: z.object({ claimRef: z.string() }),
      },
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
