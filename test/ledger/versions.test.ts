import { tool } from "@langchain/core/tools";
import { InMemoryStore } from "@langchain/langgraph";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { cardFromTool } from "../../src/ledger/cards.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { changesSince, type PartitionVersion } from "../../src/ledger/versions.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { lookupClaim } from "../helpers/cards.js";

const openCase = tool(async () => "opened", {
  name: "open_case",
  description: "Open a new case for damage to a vehicle.",
  schema: z.object({ plate: z.string() }),
});

const version = (seq: number, log: PartitionVersion["log"]): PartitionVersion => ({ seq, log });

describe("changesSince", () => {
  it("is nothing at the same version, the kinds and tools logged since otherwise", () => {
    const now = version(3, [
      { seq: 1, kinds: ["cards"], tools: ["a"] },
      { seq: 2, kinds: ["rules"], tools: [] },
      { seq: 3, kinds: ["cards"], tools: ["b"] },
    ]);
    expect(changesSince(now, 3)).toBeUndefined();
    const since = changesSince(now, 1);
    expect([...(since?.kinds ?? [])].sort()).toEqual(["cards", "rules"]);
    expect([...((since?.tools as Set<string>) ?? [])].sort()).toEqual(["b"]);
  });

  it("says refresh all when the log no longer reaches back, an entry named too many tools, or the version went back", () => {
    const cut = version(40, [{ seq: 40, kinds: ["cards"], tools: ["a"] }]);
    expect(changesSince(cut, 38)?.tools).toBe("all");
    expect(changesSince(cut, 39)?.tools).toEqual(new Set(["a"]));
    expect(changesSince(version(2, [{ seq: 2, kinds: ["cards"], tools: null }]), 1)?.tools).toBe("all");
    expect(changesSince(version(0, []), 5)?.tools).toBe("all");
  });
});

describe("ToolIndex.follow", () => {
  it("re-embeds only the cards another index's writes changed, and nothing when the version did not move", async () => {
    const store = new InMemoryStore();
    const agentLedger = new Ledger(store);
    const operatorLedger = new Ledger(store);
    await agentLedger.putCard(cardFromTool(lookupClaim, "p", 1));
    await agentLedger.putCard(cardFromTool(openCase, "p", 1));
    const agent = new ToolIndex({ ledger: agentLedger });
    await agent.reindex("p");
    const before = await agent.route("p", "whereabouts of my insurance paperwork", { k: 1 });

    // The operator's own ledger and index: nothing in the agent's objects hears of it but the store.
    const card = (await operatorLedger.getCard("p", "open_case"))!;
    await operatorLedger.putCard(
      {
        ...card,
        learned: {
          ...card.learned,
          examples: [
            { text: "whereabouts of my insurance paperwork", source: "learned", revisionId: "r1", addedAt: 1 },
          ],
        },
      },
      { expectVersion: card.version },
    );
    const revision = agent.revision("p");
    await agent.follow("p", (await agentLedger.readVersions(["p"]))[0]);
    expect(agent.revision("p")).toBeGreaterThan(revision);
    const after = await agent.route("p", "whereabouts of my insurance paperwork", { k: 1 });
    expect(after[0].tool).toBe("open_case");
    expect(before[0]?.tool).not.toBe("open_case");

    const settled = agent.revision("p");
    await agent.follow("p");
    expect(agent.revision("p")).toBe(settled);
  });
});
