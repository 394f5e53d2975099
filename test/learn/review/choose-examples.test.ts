import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ToolIndex } from "../../../src/routing/tool-index.js";
import { LessonManager } from "../../../src/learn/manager.js";
import { registerTools } from "../../../src/learn/register.js";
import { Ledger } from "../../../src/ledger/ledger.js";
import type { SettingsInput } from "../../../src/settings.js";

const P = "p";
const TOOLS = [
  { name: "refund_order", description: "Refund an order in full or in part to the original payment method." },
  { name: "track_shipment", description: "Track a parcel with the carrier's tracking number." },
  { name: "lookup_order", description: "Look up an order's status and items by its order id." },
];
const OFF_TOPIC = "cancel the gym membership of my cousin";
const MONEY_BACK = [
  "I want my money back for the kettle",
  "money back for the kettle please",
  "give me my money back for the kettle",
  "can I get my money back for the kettle",
];

/** Requests refund_order served, each routed (k 1) to the tracker (offered the tracker; served anyway): misses of routing. */
async function recordMisses(ledger: Ledger, requests: readonly string[], from = 0): Promise<void> {
  let seq = from;
  for (const request of requests) {
    seq += 1;
    const requestId = `r${seq}`;
    const threadId = `t${seq}`;
    await ledger.appendRoutes([
      {
        partition: P,
        threadId,
        requestId,
        offered: [{ tool: "track_shipment", rank: 1, score: 0.2 }],
        allSent: false,
        k: 1,
      },
    ]);
    await ledger.appendCalls([
      {
        partition: P,
        tool: "refund_order",
        runId: requestId,
        threadId,
        requestId,
        args: [],
        fingerprints: [],
        outcome: "success",
        source: "api",
      },
    ]);
    await ledger.appendTurns([
      {
        partition: P,
        threadId,
        requestId,
        request,
        calls: [{ tool: "refund_order", outcome: "success" }],
        servedBy: "refund_order",
      },
    ]);
  }
}

/** A partition with the three tools registered and indexed, routing offering `routingK` tools. */
async function freshPartition(settings: SettingsInput) {
  const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
  await ledger.configure(P, settings);
  await registerTools(ledger, TOOLS, { partition: P });
  // Wordings off: the subject is how examples are chosen (wordings would cover the misses).
  const index = new ToolIndex({ ledger, wordings: false });
  await index.reindex(P);
  return { ledger, index, manager: new LessonManager({ ledger, index }) };
}

/** A partition whose refund_order card is full (maxQueries 1) with a learned example nobody asks for. */
async function fullCard() {
  const partition = await freshPartition({ routingK: 1, maxQueries: 1, minCalls: 1 });
  const { ledger, index } = partition;
  const card = (await ledger.getCard(P, "refund_order"))!;
  await ledger.putCard({
    ...card,
    learned: { ...card.learned, examples: [{ text: OFF_TOPIC, source: "learned", addedAt: 1 }] },
  });
  await index.reindex(P);
  await recordMisses(ledger, MONEY_BACK);
  return partition;
}

describe("examples chosen as a set", () => {
  it("a missed wording takes the slot of a learned example the set no longer needs; apply records it, undo restores it", async () => {
    const { ledger, manager } = await fullCard();
    const review = await manager.review({ partition: P });
    const revision = review.revisions.find((r) => r.tool === "refund_order");
    expect(revision).toBeDefined();
    expect(revision!.queriesAdded).toHaveLength(1);
    expect(MONEY_BACK).toContain(revision!.queriesAdded[0]);
    expect(revision!.queriesDisplaced).toEqual([OFF_TOPIC]);

    const applied = await manager.apply(revision!.id, { partition: P, approvedBy: "op" });
    expect(applied.queriesDisplaced).toEqual([OFF_TOPIC]);
    const after = (await ledger.getCard(P, "refund_order"))!.learned.examples.map((e) => e.text);
    expect(after).toEqual(revision!.queriesAdded);

    await manager.undo("refund_order", { partition: P, approvedBy: "op" });
    expect((await ledger.getCard(P, "refund_order"))!.learned.examples.map((e) => e.text)).toEqual([OFF_TOPIC]);
  });

  it("re-chooses over misses the learned examples cover now, but proposes none for misses the tool's own text covers", async () => {
    const { ledger, index, manager } = await freshPartition({ routingK: 1, maxNewQueries: 1, minCalls: 1 });
    // Missed then, yet the tool's own words answer them today: no example is needed.
    const ownWords = ["refund an order in full to the original payment method", "refund the order in part"];
    await recordMisses(ledger, ownWords);
    for (const request of ownWords) expect((await index.route(P, request, { k: 1 }))[0].tool).toBe("refund_order");
    expect((await manager.review({ partition: P })).revisions.filter((r) => r.tool === "refund_order")).toEqual([]);

    // Misses in the users' words: one review takes one (maxNewQueries 1); the next takes another,
    // though the first example covers it now.
    await recordMisses(ledger, MONEY_BACK, ownWords.length);
    const first = (await manager.review({ partition: P, autoApply: true })).revisions.find(
      (r) => r.tool === "refund_order",
    );
    expect(first?.queriesAdded).toHaveLength(1);
    const covered = MONEY_BACK.filter((q) => q !== first!.queriesAdded[0]);
    for (const request of covered) expect((await index.route(P, request, { k: 1 }))[0].tool).toBe("refund_order");
    const second = (await manager.review({ partition: P, autoApply: true })).revisions.find(
      (r) => r.tool === "refund_order",
    );
    expect(second?.queriesAdded).toHaveLength(1);
    expect(covered).toContain(second!.queriesAdded[0]);
    expect(ownWords).not.toContain(second!.queriesAdded[0]);
  });

  it("reads a tool's misses over the whole window, not its newest end: an older kind of request still gets its example", async () => {
    const { ledger, manager } = await freshPartition({ routingK: 1, minCalls: 1 });
    // First the kettle refunds, then many more misses of one other kind: far more than a review
    // reads, so a review reading only the newest would see the blender alone.
    await recordMisses(ledger, MONEY_BACK);
    // Routing offers refund_order third of three for it (k 1): a miss the tool's own text does not cover.
    const blender = "the blender arrived broken and I want it sorted";
    await recordMisses(
      ledger,
      Array.from({ length: 450 }, () => blender),
      MONEY_BACK.length,
    );
    const revision = (await manager.review({ partition: P })).revisions.find((r) => r.tool === "refund_order");
    expect(revision?.queriesAdded).toContain(blender);
    expect(revision!.queriesAdded.some((q) => MONEY_BACK.includes(q))).toBe(true);
  });
});
