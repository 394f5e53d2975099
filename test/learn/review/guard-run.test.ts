import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { DeterministicProposer } from "../../../src/learn/deterministic-proposer.js";
import { registerTools } from "../../../src/learn/register.js";
import { runReview } from "../../../src/learn/review/run.js";
import { renderReview } from "../../../src/cli/format.js";
import { Ledger } from "../../../src/ledger/ledger.js";
import type { Offer } from "../../../src/ledger/schema.js";
import { type RouteQuery, ToolIndex } from "../../../src/routing/tool-index.js";

/**
 * The guard on the whole in a review over a real ledger and index: a long-tail partition where
 * one popular tool's wordings would take the requests of many tools with one request each. The
 * review replays the held-out slice, refuses the popular tool's new wordings with the reason,
 * stores the gate (every index reads wordings through it) and says so to the operator.
 *
 * How much a wording lifts its tool is routing's scoring, which this test does not choose: the
 * index here is the real one, except that a tool holding a wording with the request's words comes
 * first (what uncalibrated wordings did to the long tail, issue 43). The guard is judged on what
 * routing does with the wordings, whatever lifts them.
 */

const P = "tenant";

const TOOLS = [
  { name: "travel_agent", description: "General travel assistant." },
  { name: "hotel_booking", description: "Book a hotel room." },
  { name: "flight_search", description: "Search flights between two airports." },
  { name: "museum_tickets", description: "Buy museum tickets." },
  { name: "car_rental", description: "Rent a car at a station." },
  { name: "train_times", description: "Train timetables between stations." },
];

const PHRASES = [
  "a hotel room in the old town for friday",
  "flights to the coast on saturday",
  "museum tickets for sunday in the old town",
  "rent a car at the coast for friday",
  "train to the coast on sunday evening",
];
/** The popular tool served each phrase twice: its wordings hold every tail request's words. */
const POPULAR = [...PHRASES.map((p) => `${p} please`), ...PHRASES.map((p) => `i need ${p}`)];
const TAIL: [string, string][] = [
  ["hotel_booking", PHRASES[0]],
  ["flight_search", PHRASES[1]],
  ["museum_tickets", PHRASES[2]],
  ["car_rental", PHRASES[3]],
  ["train_times", PHRASES[4]],
];

/** The real index, where a tool with a wording holding all of a request's words comes first. */
class WordingsFirstIndex extends ToolIndex {
  override async route(partition: string, request: string, query: RouteQuery): Promise<Offer[]> {
    const offers = await super.route(partition, request, query);
    const words = request.toLowerCase().split(/\s+/);
    const lifted =
      offers.length === 0
        ? undefined
        : this.indexedTools(partition).find((tool) =>
            this.wordingsOf(partition, tool).some((w) =>
              words.every((word) => w.toLowerCase().split(/\s+/).includes(word)),
            ),
          );
    if (lifted === undefined) return offers;
    const rest = offers.filter((o) => o.tool !== lifted);
    return [{ tool: lifted, rank: 1, score: (offers[0]?.score ?? 0) + 1 }, ...rest]
      .slice(0, query.k)
      .map((o, i) => ({ ...o, rank: i + 1 }));
  }
}

async function world() {
  const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
  await ledger.configure(P, { routingK: 3 });
  await registerTools(ledger, TOOLS, { partition: P });
  const index = new WordingsFirstIndex({ ledger });
  await index.reindex(P);
  let seq = 0;
  const serve = async (request: string, servedBy: string) => {
    seq += 1;
    const requestId = `r${String(seq).padStart(4, "0")}`;
    const threadId = `t${seq}`;
    await ledger.appendCalls([
      {
        partition: P,
        tool: servedBy,
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
      { partition: P, threadId, requestId, request, calls: [{ tool: servedBy, outcome: "success" }], servedBy },
    ]);
  };
  return { ledger, index, serve };
}

describe("the guard on the whole in a review", () => {
  it("refuses the popular tool's wordings that take the one-request tools' held-out requests, and says why", async () => {
    const { ledger, index, serve } = await world();
    for (const request of POPULAR) await serve(request, "travel_agent");
    for (const [tool, request] of TAIL) await serve(request, tool);
    // Unguarded, the wordings take the tail's requests: what the guard is for.
    await index.refreshWordings(P, {
      turns: await ledger.listTurns(P),
      calls: await ledger.listCalls(P),
      through: new Map([["travel_agent", "r9999"]]),
    });
    const stolen = [];
    for (const [tool, request] of TAIL)
      if ((await index.route(P, request, { k: 3 }))[0]?.tool !== tool) stolen.push(tool);
    expect(stolen.length).toBeGreaterThanOrEqual(2);

    const review = await runReview({ ledger, index, proposer: new DeterministicProposer() }, { partition: P });
    const guard = review.guard!;
    expect(guard.trials).toBeGreaterThan(0);
    expect(guard.kept).not.toContain("travel_agent");
    expect(guard.held.find((h) => h.tool === "travel_agent")?.reason).toBe("pulled");
    expect(guard.refused).toMatch(/held-out slice would fall|no wordings of their own would fall/);
    // The gate is stored with the verdict: another process reads wordings through it.
    const gate = await ledger.wordingsGate(P);
    expect(gate?.tools["travel_agent"]).toBeUndefined();
    expect((gate?.verdict as { refused?: string }).refused).toBe(guard.refused);
    // Routing as served: the tail keeps its requests.
    for (const [tool, request] of TAIL) expect((await index.route(P, request, { k: 3 }))[0]?.tool).toBe(tool);
    expect(index.wordingsOf(P, "travel_agent")).toEqual([]);
    // A fresh index (another process) builds the same wordings from the ledger.
    const other = new ToolIndex({ ledger });
    await other.reindex(P);
    expect(other.wordingsOf(P, "travel_agent")).toEqual([]);
    // The operator sees it.
    const text = renderReview(review, { dryRun: false, autoApply: false, effects: [], waiting: [] }).join("\n");
    expect(text).toContain("guard");
    expect(text).toContain(guard.refused!);
  });

  it("lets in the wordings a held-out slice does not route worse with", async () => {
    const { ledger, index, serve } = await world();
    for (const request of POPULAR) await serve(request, "travel_agent");
    const review = await runReview({ ledger, index, proposer: new DeterministicProposer() }, { partition: P });
    expect(review.guard?.refused).toBeUndefined();
    expect(review.guard?.kept).toEqual(["travel_agent"]);
    // Seven of ten are learned from; the newest three (a quarter, rounded) were the slice.
    expect(index.wordingsOf(P, "travel_agent")).toHaveLength(7);
    // The gate holds the seventh turn's record id (turn ids sort by time; request ids need not).
    const turns = await ledger.listTurns(P);
    const seventh = turns.find((t) => t.requestId === "r0007")!;
    expect((await ledger.wordingsGate(P))?.tools["travel_agent"]).toBe(seventh.id);
  });

  it("lets in, at the next review, what the last held out: judged then by the traffic that arrived since", async () => {
    const { ledger, index, serve } = await world();
    for (const request of POPULAR) await serve(request, "travel_agent");
    await runReview({ ledger, index, proposer: new DeterministicProposer() }, { partition: P });
    expect(index.wordingsOf(P, "travel_agent")).toHaveLength(7);
    // Nothing new to hold out: no slice to judge by, so the gate stays where it was.
    const idle = await runReview({ ledger, index, proposer: new DeterministicProposer() }, { partition: P });
    expect(idle.guard?.refused).toBe("no served request to hold out yet");
    expect(index.wordingsOf(P, "travel_agent")).toHaveLength(7);
    // Other tools' requests arrive: they are the slice, and the popular tool's three held-out turns go in.
    for (const [tool, request] of TAIL) await serve(request, tool);
    const next = await runReview({ ledger, index, proposer: new DeterministicProposer() }, { partition: P });
    expect(next.guard?.slice).toBeGreaterThan(0);
    expect(next.guard?.kept).toContain("travel_agent");
    expect(index.wordingsOf(P, "travel_agent")).toHaveLength(POPULAR.length);
  });

  it("is off with guard: false (every wording in, as before the guard)", async () => {
    const { ledger, index, serve } = await world();
    for (const request of POPULAR) await serve(request, "travel_agent");
    for (const [tool, request] of TAIL) await serve(request, tool);
    const review = await runReview(
      { ledger, index, proposer: new DeterministicProposer(), guard: false },
      { partition: P },
    );
    expect(review.guard).toBeUndefined();
    expect(index.wordingsOf(P, "travel_agent")).toHaveLength(POPULAR.length);
  });
});
