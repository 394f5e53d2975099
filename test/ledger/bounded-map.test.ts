import { describe, expect, it } from "vitest";
import { BoundedMap } from "../../src/ledger/bounded-map.js";
import { PruneSchedule } from "../../src/ledger/collections/store-io.js";

describe("BoundedMap: per-partition state held in memory is bounded (issue 44, item 6)", () => {
  it("keeps at most cap entries, forgetting the least recently used first, and says which", () => {
    const gone: string[] = [];
    const map = new BoundedMap<string, number>(3, (key) => gone.push(key));
    for (const key of ["a", "b", "c"]) map.set(key, 1);
    expect(map.get("a")).toBe(1); // a is now the most recent
    map.set("d", 1);
    expect([...map.keys()]).toEqual(["c", "a", "d"]);
    expect(gone).toEqual(["b"]);
    map.set("c", 2); // a write refreshes too
    map.set("e", 1);
    expect(gone).toEqual(["b", "a"]);
    expect(map.size).toBe(3);
    expect(map.get("missing")).toBeUndefined();
  });

  it("fifty thousand partitions seen leave the prune schedule at its cap", () => {
    const schedule = new PruneSchedule();
    for (let i = 0; i < 50_000; i++) schedule.due(`u:${i}/calls/search`, 1, 100);
    const since = (schedule as unknown as { since: Map<string, number> }).since;
    expect(since.size).toBe(10_000);
    // The most recent keys are kept, and their counts go on.
    expect(since.get("u:49999/calls/search")).toBe(1);
    expect(schedule.due("u:49999/calls/search", 99, 100)).toBe(true);
  });
});
