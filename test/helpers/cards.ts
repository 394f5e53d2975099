import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { cardFromTool } from "../../src/ledger/cards.js";
import type { ToolCard } from "../../src/ledger/schema.js";

export const lookupClaim = tool(async ({ claimRef }) => `claim ${claimRef}`, {
  name: "lookup_claim",
  description: "Look up an insurance claim by its reference.\n",
  schema: z.object({ claimRef: z.string().describe("e.g. CW-123456"), includeNotes: z.boolean().optional() }),
});

/** A card with something of every learned kind. */
export function learnedCard(): ToolCard {
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
