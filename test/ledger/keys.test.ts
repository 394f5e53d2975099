import { describe, expect, it } from "vitest";
import { idFloorAt, timeOrderedId } from "../../src/ledger/keys.js";

describe("idFloorAt", () => {
  it("sorts after every id made before the millisecond and before every id made at or after it", () => {
    const t = 1_790_000_000_000;
    const floor = idFloorAt(t);
    for (const id of [timeOrderedId(t - 1), timeOrderedId(t - 1), timeOrderedId(t - 1000)])
      expect(id < floor).toBe(true);
    for (const id of [timeOrderedId(t), timeOrderedId(t), timeOrderedId(t + 1)]) expect(id > floor).toBe(true);
  });
});
