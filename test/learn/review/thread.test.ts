import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ToolIndex } from "../../../src/routing/tool-index.js";
import { timeOrderedId } from "../../../src/ledger/keys.js";
import { Ledger } from "../../../src/ledger/ledger.js";
import { rankByCoverage } from "../../../src/learn/coverage.js";
import { detect } from "../../../src/learn/detect.js";
import { DeterministicProposer } from "../../../src/learn/deterministic-proposer.js";
import { LessonManager } from "../../../src/learn/manager.js";
import { registerTools } from "../../../src/learn/register.js";
import {
  buildEvidence,
  gatherWindow,
  proposeLessons,
  reviewRouting,
  selectDue,
  valueCheck,
  vetLessons,
} from "../../../src/learn/review/index.js";
import { DEFAULT_EXAMPLE_OBJECTIVE } from "../../../src/learn/what-if.js";
import { type ShopCall, SHOP_TOOLS, shopTurns } from "../../helpers/shop-world.js";

/**
 * The review's stages run on one thread's new records only (as a graph node before the agent
 * would), and find the lessons the operator's full review finds for the same records.
 */

const P = "default";
const TOOLS = SHOP_TOOLS;
const MONEY_BACK = [
  "I want my money back for the broken blender parcel, email me",
  "email me: money back on the kettle parcel",
];

async function world() {
  const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
  await ledger.configure(P, { routingK: 2 });
  await registerTools(ledger, TOOLS);
  // Wordings off: the subject is the lessons a thread review finds (wordings would cover the misses).
  const index = new ToolIndex({ ledger, wordings: false });
  const key = await ledger.fingerprintKey(P);
  const write = shopTurns(ledger, { partition: P, index, k: 2, fingerprintKey: key });
  /** One user turn, routed by the index unless `routed` is false, written as the recorder writes it. */
  const turn = async (threadId: string, request: string, calls: ShopCall[], routed = true): Promise<void> => {
    await write(request, calls, { threadId, routed });
  };
  return { ledger, index, turn };
}

describe("the review's stages on one thread's new records", () => {
  it("read only that thread's records after an id, and find the lessons the full review finds", async () => {
    const w = await world();
    // Earlier traffic, in another thread: successful calls only, in words of its own.
    for (const n of ["48213", "77120", "90314"]) {
      await w.turn("old", `cancel my subscription renewal ${n}`, [
        { tool: "cancel_order", args: { order_id: `ORD-${n}` } },
      ]);
    }
    const seen = timeOrderedId();
    // The thread's new records: ids refused without their prefix, and requests routing missed.
    for (const id of ["55107", "31337"]) {
      await w.turn(
        "t-new",
        `where is order ${id}?`,
        [
          { tool: "lookup_order", args: { order_id: id }, error: `order_id must start with ORD-: got ${id}` },
          { tool: "lookup_order", args: { order_id: `ORD-${id}` } },
        ],
        false,
      );
    }
    for (const request of MONEY_BACK) {
      await w.turn("t-new", request, [{ tool: "refund_order", args: { order_id: "ORD-31337", amount: 25 } }]);
    }
    for (const id of ["20202", "30303"]) {
      await w.turn("t-new", `refund order ORD-${id}`, [
        { tool: "refund_order", args: { order_id: `ORD-${id}`, amount: 5 } },
      ]);
    }

    // gather → detect → select → evidence → propose → vet, on the thread's new records only.
    const window = await gatherWindow(w.ledger, P, { after: seen, threadId: "t-new" });
    expect(window.turns).toHaveLength(6);
    expect(window.calls).toHaveLength(8);
    for (const row of [...window.calls, ...window.turns, ...window.routes]) {
      expect(row.threadId).toBe("t-new");
      expect(row.id > seen).toBe(true);
    }
    const names = window.cards.map((c) => c.name);
    const detection = detect({
      turns: window.turns,
      routes: window.routes,
      calls: window.calls,
      tools: names,
      settings: window.settings,
    });
    const proposer = new DeterministicProposer({ rankExamples: rankByCoverage });
    const selection = selectDue({ ...window, detection, callsModel: false });
    expect(selection.due.map((d) => d.card.name).sort()).toEqual(["lookup_order", "refund_order"]);
    const routing = reviewRouting(window, w.index, DEFAULT_EXAMPLE_OBJECTIVE);
    const containsValue = valueCheck(window);
    const lessons = new Map<string, unknown>();
    for (const due of selection.due) {
      const evidence = await buildEvidence(routing, window, due);
      const { proposal } = await proposeLessons(proposer, evidence.evidence, due.detection);
      const vetted = vetLessons({ window, evidence, proposal, containsValue });
      lessons.set(due.card.name, {
        notesAdded: vetted.kept.notes.map((n) => n.text),
        queriesAdded: vetted.kept.examples.map((e) => e.text),
        avoidAdded: vetted.kept.notFor.map((n) => ({ text: n.text, tool: n.tool })),
        callExample: vetted.callExample,
      });
    }
    expect(lessons.get("lookup_order")).toEqual({
      notesAdded: ["order_id must look like ORD-#####; calls with ##### were refused (validation)."],
      queriesAdded: [],
      avoidAdded: [],
      callExample: 'Example call: {"order_id": "ORD-#####"}',
    });
    expect(lessons.get("refund_order")).toMatchObject({ queriesAdded: expect.arrayContaining([...MONEY_BACK]) });

    // The operator's review of the whole partition finds the same lessons.
    const manager = new LessonManager({ ledger: w.ledger, index: w.index });
    const full = await manager.review({ dryRun: true });
    expect(full.revisions.map((r) => r.tool).sort()).toEqual([...lessons.keys()].sort());
    for (const r of full.revisions) {
      expect(lessons.get(r.tool)).toEqual({
        notesAdded: r.notesAdded,
        queriesAdded: r.queriesAdded,
        avoidAdded: r.avoidAdded,
        callExample: r.callExample,
      });
    }
  });
});
