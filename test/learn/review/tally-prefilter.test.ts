import { describe, expect, it } from "vitest";
import { detect } from "../../../src/learn/detect.js";
import { mayAddEvidence } from "../../../src/learn/review/tally.js";
import type { RouteRecord, TurnRecord } from "../../../src/ledger/schema.js";

const TOOLS = ["a", "b"];
const KNOWN = new Set(TOOLS);

function turnOf(n: number, calls: string[], servedBy: string | undefined, threadId: string | undefined): TurnRecord {
  return {
    v: 1,
    id: `id-${String(n).padStart(6, "0")}`,
    partition: "p",
    ...(threadId !== undefined ? { threadId } : {}),
    requestId: `r-${n}`,
    request: "a request",
    at: n,
    calls: calls.map((tool) => ({ tool, outcome: "success" as const })),
    ...(servedBy !== undefined ? { servedBy } : {}),
  } as TurnRecord;
}

function routeOf(requestId: string, allSent: boolean, offered: string[]): RouteRecord {
  return {
    v: 1,
    id: "id-000000",
    partition: "p",
    threadId: "t",
    requestId,
    at: 0,
    allSent,
    k: 2,
    offered: offered.map((tool, i) => ({ tool, rank: i + 1, score: 1 - i / 10 })),
  } as RouteRecord;
}

describe("mayAddEvidence: the tally runs detection only when it could find something", () => {
  it("never says no where detection finds a miss or a confusion (every combination of a small world)", () => {
    const served = [undefined, "a", "b", "x"];
    const callSets = [[], ["a"], ["b"], ["x"], ["a", "b"]];
    const routes: (undefined | [boolean, string[]])[] = [
      undefined,
      [true, ["a"]],
      [false, []],
      [false, ["a"]],
      [false, ["b"]],
      [false, ["b", "a"]],
      [false, ["x"]],
    ];
    let checked = 0;
    let skipped = 0;
    let found = 0;
    for (const threadId of [undefined, "t"])
      for (const s of served)
        for (const calls of callSets)
          for (const r of routes)
            for (const hasBefore of [false, true])
              for (const bServed of served)
                for (const bCalls of callSets) {
                  if (!hasBefore && (bServed !== undefined || bCalls.length > 0)) continue;
                  const before = hasBefore && threadId !== undefined ? turnOf(1, bCalls, bServed, threadId) : undefined;
                  const turn = turnOf(2, calls, s, threadId);
                  const route = r ? routeOf(turn.requestId, r[0], r[1]) : undefined;
                  const detection = detect({
                    turns: before ? [before, turn] : [turn],
                    routes: route ? [route] : [],
                    calls: [],
                    tools: TOOLS,
                  });
                  const evidence = [...detection.tools.values()].reduce(
                    (n, td) => n + td.misses.length + td.confusions.length,
                    0,
                  );
                  const may = mayAddEvidence(turn, before, route, KNOWN);
                  checked += 1;
                  if (!may) skipped += 1;
                  if (evidence > 0) found += 1;
                  if (!may) expect(evidence, JSON.stringify({ turn, before, route })).toBe(0);
                }
    // The check is not empty: many cases are skipped, and many others do find evidence.
    expect(checked).toBeGreaterThan(500);
    expect(skipped).toBeGreaterThan(100);
    expect(found).toBeGreaterThan(50);
  });

  it("a quiet turn (served by an offered tool, a new thread) is skipped", () => {
    const turn = turnOf(3, ["a"], "a", "t");
    expect(mayAddEvidence(turn, undefined, routeOf(turn.requestId, false, ["a", "b"]), KNOWN)).toBe(false);
    expect(mayAddEvidence(turn, undefined, routeOf(turn.requestId, false, ["b"]), KNOWN)).toBe(true);
  });
});
