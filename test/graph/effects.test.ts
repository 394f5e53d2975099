import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { createToolLessonsAgent } from "../../src/graph/agent.js";
import { callsOfTurn, DeskModel, deskTools, human } from "./desk.js";

/**
 * The graph path of the effect check: a real LangGraph graph (`createToolLessonsAgent`: the
 * lessons node, the agent node, LangGraph's `ToolNode`) with a scripted model. lookup_order is
 * refused for an id without its prefix; a lesson saying so is learned and applied (`autoApply`).
 * A model that reads the note stops being refused and the lesson is measured as helping; a model
 * that ignores it goes on being refused, and the lesson is flagged and, under `undoFlagged`,
 * undone, so later turns no longer see its note.
 */
const USER = "cy";
const P = `u:${USER}`;
const NOTE = "order_id must look like ORD-";

async function desk(options: {
  readsNotes: boolean;
  undoFlagged?: boolean;
  subgraph?: boolean;
  failures?: { kind: string; message: string }[];
}) {
  const model = new DeskModel([], [], {}, options.readsNotes);
  const graph = createToolLessonsAgent({
    model,
    tools: deskTools(),
    store: new InMemoryStore(),
    checkpointer: new MemorySaver(),
    maxTools: 2,
    autoApply: true,
    subgraph: options.subgraph ?? false,
    ...(options.undoFlagged !== undefined ? { undoFlagged: options.undoFlagged } : {}),
    failureSink: (f) => {
      if (!options.failures) throw new Error(`unexpected failure: ${f.kind} ${f.message}`);
      options.failures.push({ kind: f.kind, message: f.message });
    },
  });
  // A baseline worth judging: the review waits for ten refused calls (twenty calls of the tool).
  await graph.ledger.configure(P, { minFailures: 10 });
  let n = 0;
  async function ask() {
    n += 1;
    const config = { configurable: { thread_id: `t-${n}`, user_id: USER }, metadata: { user_id: USER } };
    const state = await graph.invoke({ messages: [human(`Where is order ${String(400000 + n)}?`)] }, config);
    await graph.recorder.flush();
    return { calls: callsOfTurn(state.messages), report: state.lessonsReport };
  }
  /** Turns until a revision of lookup_order is applied; its id. */
  async function untilApplied(): Promise<string> {
    for (let i = 0; i < 30; i++) {
      const { report } = await ask();
      if (report.applied.length > 0) return report.applied[0];
    }
    throw new Error("no revision was applied in 30 turns");
  }
  return { graph, model, ask, untilApplied };
}

describe("the graph measures the effect of applied lessons", () => {
  it("a lesson that stops a repeated refusal is measured as helping, on the turn enough new calls arrived", async () => {
    const d = await desk({ readsNotes: true });
    const id = await d.untilApplied();
    const reports = [];
    for (let i = 0; i < 22; i++) {
      const turn = await d.ask();
      expect(turn.calls).toEqual([{ tool: "lookup_order", ok: true }]);
      reports.push(turn.report);
    }
    const measured = reports.filter((r) => r.effects.length > 0);
    // Measured once: when the tool's calls since the lesson reached the minimum, not on every turn.
    expect(measured).toHaveLength(1);
    expect(measured[0].effects).toEqual([{ revision: id, tool: "lookup_order", verdict: "helped", flagged: false }]);
    expect(measured[0].undone).toEqual([]);
    expect((await d.graph.ledger.listRevisions(P, { tool: "lookup_order" }))[0].status).toBe("applied");
  });

  it("a lesson after which the refusals go on is flagged, and left in place without undoFlagged", async () => {
    const d = await desk({ readsNotes: false });
    const id = await d.untilApplied();
    const reports = [];
    for (let i = 0; i < 12; i++) reports.push((await d.ask()).report);
    const effects = reports.flatMap((r) => r.effects).filter((e) => e.verdict !== "not_enough_data");
    expect(effects).toEqual([{ revision: id, tool: "lookup_order", verdict: "no_effect", flagged: true }]);
    expect(reports.flatMap((r) => r.undone)).toEqual([]);
    const [revision] = await d.graph.ledger.listRevisions(P, { tool: "lookup_order" });
    expect(revision).toMatchObject({ id, status: "applied" });
  });

  it.each([false, true])(
    "under undoFlagged the flagged lesson is undone with the reason recorded, and later turns no longer see its note (subgraph: %s)",
    async (subgraph) => {
      const d = await desk({ readsNotes: false, undoFlagged: true, subgraph });
      const id = await d.untilApplied();
      const seenBefore = d.model.seen.length;
      const reports = [];
      for (let i = 0; i < 12; i++) reports.push((await d.ask()).report);
      const undoneAt = reports.findIndex((r) => r.undone.length > 0);
      expect(undoneAt).toBeGreaterThanOrEqual(0);
      expect(reports[undoneAt].undone).toEqual([id]);
      expect(reports[undoneAt].effects).toContainEqual({
        revision: id,
        tool: "lookup_order",
        verdict: "no_effect",
        flagged: true,
      });
      const revision = (await d.graph.ledger.listRevisions(P, { tool: "lookup_order" })).find((r) => r.id === id);
      expect(revision).toMatchObject({ status: "undone", closedBy: "tool-lessons" });
      expect(revision?.undoneBecause).toMatch(
        /^no measured effect on what it answered \(failure:validation \d+\/\d+ → \d+\/\d+\)$/,
      );
      // The model was shown the note after the apply, and is not shown it after the undo.
      const shown = d.model.seen.slice(seenBefore).map((s) => (s.descriptions.lookup_order ?? "").includes(NOTE));
      expect(shown.some(Boolean)).toBe(true);
      const after = await d.ask();
      expect(after.report.applied).toEqual([]);
      expect(d.model.seen.at(-1)?.descriptions.lookup_order).not.toContain(NOTE);
      expect((await d.graph.ledger.getCard(P, "lookup_order"))?.learned.notes.join(" ") ?? "").not.toContain(NOTE);
    },
  );

  it("a store that fails during the check: the turn goes on, the failure is reported once", async () => {
    const failures: { kind: string; message: string }[] = [];
    const d = await desk({ readsNotes: true, failures });
    await d.untilApplied();
    const ledger = d.graph.ledger;
    const real = ledger.listRevisions.bind(ledger);
    let broken = false;
    ledger.listRevisions = async (...args) => {
      if (broken) throw new Error("store down");
      return real(...args);
    };
    broken = true;
    const turns = [];
    for (let i = 0; i < 22; i++) turns.push(await d.ask());
    for (const t of turns) expect(t.calls).toEqual([{ tool: "lookup_order", ok: true }]);
    expect(failures.filter((f) => f.kind === "learn:effects")).toHaveLength(1);
    expect(turns.some((t) => t.report.ledgerFailed)).toBe(true);
    expect(turns.flatMap((t) => t.report.effects)).toEqual([]);
  });
});
