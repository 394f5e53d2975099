import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ToolIndex } from "../../../src/index/tool-index.js";
import { LessonManager } from "../../../src/learn/manager.js";
import { registerTools } from "../../../src/learn/register.js";
import { Ledger } from "../../../src/ledger/ledger.js";

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

/** A partition whose refund_order card is full (maxQueries 1) with a learned example nobody asks for. */
async function fullCard() {
  const ledger = new Ledger(new InMemoryStore(), { onWarning: () => undefined });
  await ledger.configure(P, { routingK: 1, maxQueries: 1, minCalls: 1 });
  await registerTools(ledger, TOOLS, { partition: P });
  const card = (await ledger.getCard(P, "refund_order"))!;
  await ledger.putCard({
    ...card,
    learned: { ...card.learned, examples: [{ text: OFF_TOPIC, source: "learned", addedAt: 1 }] },
  });
  const index = new ToolIndex({ ledger });
  await index.reindex(P);
  let seq = 0;
  for (const request of MONEY_BACK) {
    seq += 1;
    const requestId = `r${seq}`;
    const threadId = `t${seq}`;
    // Routing offered the tracker; refund_order served it anyway (a miss).
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
  return { ledger, index, manager: new LessonManager({ ledger, index }) };
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
});
