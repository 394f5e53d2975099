import { HumanMessage } from "@langchain/core/messages";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { createLessonsNodes } from "../../../src/graph/lessons-graph.js";
import { rankByCoverage } from "../../../src/learn/coverage.js";
import { DeterministicProposer } from "../../../src/learn/deterministic-proposer.js";
import { LessonManager } from "../../../src/learn/manager.js";
import { registerTools } from "../../../src/learn/register.js";
import { runReview } from "../../../src/learn/review/run.js";
import { storeReview } from "../../../src/learn/review/store.js";
import { timeOrderedId } from "../../../src/ledger/keys.js";
import { Ledger } from "../../../src/ledger/ledger.js";
import type { Revision } from "../../../src/ledger/schema.js";
import { ToolIndex } from "../../../src/routing/tool-index.js";
import { type ShopCall, shopTools, shopTurns } from "../../helpers/shop-world.js";

/**
 * One review run (`runReview`) and its two adapters: `LessonManager.review()` and the graph's learn
 * node give the same revisions for the same ledger; the store keeps a later revision of a tool
 * when the run saw the earlier one; a run that lost the claim reports nothing it did not store.
 */

const P = "default";
const TOOLS = shopTools("lookup_order", "refund_order", "track_parcel");

/** A ledger with the tools registered, and one user turn written as the recorder writes it. */
async function world() {
  const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
  await ledger.configure(P, { routingK: 2 });
  await registerTools(ledger, TOOLS);
  // Wordings off: the subject is the lessons both adapters learn (wordings would cover the misses).
  const index = new ToolIndex({ ledger, wordings: false });
  const key = await ledger.fingerprintKey(P);
  const write = shopTurns(ledger, { partition: P, index, k: 2, fingerprintKey: key });
  const turn = async (threadId: string, request: string, calls: ShopCall[]): Promise<void> => {
    await write(request, calls, { threadId });
  };
  return { ledger, index, turn };
}

/** The same traffic in any world: refused ids in two threads, money-back wordings missed in two others. */
async function traffic(w: Awaited<ReturnType<typeof world>>): Promise<void> {
  for (const [thread, id] of [
    ["a", "55107"],
    ["b", "31337"],
  ]) {
    await w.turn(thread, `where is order ${id}?`, [
      { tool: "lookup_order", args: { order_id: id }, error: `order_id must start with ORD-: got ${id}` },
      { tool: "lookup_order", args: { order_id: `ORD-${id}` } },
    ]);
  }
  for (const [thread, item] of [
    ["c", "kettle"],
    ["d", "blender"],
  ]) {
    await w.turn(thread, `money back on the broken ${item} please`, []);
    await w.turn(thread, "refund order ORD-20202", [
      { tool: "refund_order", args: { order_id: "ORD-20202", amount: 5 } },
    ]);
  }
}

/** What a revision says, without its id and times. */
function lesson(r: Revision) {
  return {
    tool: r.tool,
    status: r.status,
    notesAdded: r.notesAdded,
    queriesAdded: r.queriesAdded,
    avoidAdded: r.avoidAdded,
    callExample: r.callExample,
    evidence: r.evidence.map((e) => (e.kind === "failed_call" ? { kind: e.kind, calls: e.callIds.length } : e)),
    ranks: r.ranks,
    refused: r.refused,
  };
}

const proposer = () => new DeterministicProposer({ rankExamples: rankByCoverage });

describe("one review run, two adapters", () => {
  it("the manager and the graph's learn node give the same revisions for the same ledger", async () => {
    const a = await world();
    const b = await world();
    await traffic(a);
    await traffic(b);
    const byManager = await new LessonManager({ ledger: a.ledger, index: a.index }).review({ autoApply: true });
    const { learn } = createLessonsNodes({ tools: TOOLS, ledger: b.ledger, index: b.index, autoApply: true });
    const update = (await learn(
      {
        messages: [new HumanMessage("hello")],
        lessonSignals: [
          { kind: "failure", tools: ["lookup_order"] },
          { kind: "miss", tools: ["refund_order"] },
        ],
      },
      { configurable: { thread_id: "e" } },
    )) as { lessonsReport: { proposed: string[]; applied: string[] } };
    const byGraph = await b.ledger.listRevisions(P);
    expect(byManager.revisions.map((r) => r.tool).sort()).toEqual(["lookup_order", "refund_order"]);
    expect(byGraph.map(lesson).sort((x, y) => x.tool.localeCompare(y.tool))).toEqual(
      byManager.revisions.map(lesson).sort((x, y) => x.tool.localeCompare(y.tool)),
    );
    expect(byGraph.every((r) => r.status === "applied")).toBe(true);
    expect([...update.lessonsReport.proposed].sort()).toEqual(byGraph.map((r) => r.id).sort());
    expect([...update.lessonsReport.applied].sort()).toEqual(byGraph.map((r) => r.id).sort());
  });

  it("a scope of one thread since a request id reads that thread's records only", async () => {
    const w = await world();
    await traffic(w);
    const since = timeOrderedId();
    await w.turn("c", "money back on the broken toaster please", []);
    await w.turn("c", "refund order ORD-20202", [{ tool: "refund_order", args: { order_id: "ORD-20202", amount: 5 } }]);
    const deps = { ledger: w.ledger, index: w.index, proposer: proposer() };
    // Since the id, thread c holds one miss: below minMisses, so nothing is proposed from it.
    const thread = await runReview(deps, { partition: P, threadId: "c", after: since }, { dryRun: true });
    expect(thread.revisions).toEqual([]);
    // The partition holds three misses of refund_order and two refusals of lookup_order.
    const partition = await runReview(deps, { partition: P }, { dryRun: true });
    expect(partition.revisions.map((r) => r.tool).sort()).toEqual(["lookup_order", "refund_order"]);
    // dryRun stored nothing.
    expect(await w.ledger.listRevisions(P)).toEqual([]);
  });
});

describe("storing a review", () => {
  it("keeps a later revision of a tool when the run saw the earlier one, refuses it when it did not", async () => {
    const w = await world();
    await traffic(w);
    const deps = { ledger: w.ledger, index: w.index, proposer: proposer() };
    const first = await runReview(deps, { partition: P, tools: ["lookup_order"] }, { autoApply: true });
    expect(first.revisions.map((r) => r.status)).toEqual(["applied"]);
    const [earlier] = await w.ledger.listRevisions(P, { tool: "lookup_order" });
    const later: Revision = { ...earlier, id: timeOrderedId(), status: "proposed", notesAdded: ["A later note."] };
    // Without what it saw, the claim check takes a later revision for a race lost, and refuses it.
    expect(await storeReview(w.ledger, P, [later], new Map())).toEqual([]);
    // With it, the later revision is stored.
    expect((await storeReview(w.ledger, P, [later], new Map(), [earlier])).map((r) => r.id)).toEqual([later.id]);
    expect((await w.ledger.listRevisions(P, { tool: "lookup_order" })).map((r) => r.id)).toEqual([
      later.id,
      earlier.id,
    ]);
  });

  it("two runs at once store each tool once, and neither reports an id it did not store", async () => {
    const w = await world();
    await traffic(w);
    const deps = { ledger: w.ledger, index: w.index, proposer: proposer() };
    const runs = await Promise.all([
      runReview(deps, { partition: P, tools: ["lookup_order"] }),
      runReview(deps, { partition: P, tools: ["lookup_order"] }),
    ]);
    const stored = await w.ledger.listRevisions(P, { tool: "lookup_order" });
    expect(stored).toHaveLength(1);
    expect(runs.flatMap((r) => r.revisions.map((x) => x.id))).toEqual([stored[0].id]);
  });
});
