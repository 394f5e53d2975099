import { describe, expect, it } from "vitest";
import { TimeBoundExceeded } from "../src/errors.js";
import { Deadline, withinBound } from "../src/failure.js";

const later = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));
const what = { stage: "serve", kind: "routing" } as const;

describe("withinBound, the one time bound", () => {
  it("gives the work's value in time, and a TimeBoundExceeded naming the stage and kind past it", async () => {
    expect(await withinBound(later(5, "ok"), 1_000, what)).toBe("ok");
    const late = withinBound(() => later(500, "late"), 20, what);
    await expect(late).rejects.toBeInstanceOf(TimeBoundExceeded);
    await expect(late).rejects.toMatchObject({ context: { stage: "serve", kind: "routing", timeoutMs: 20 } });
  });

  it("waits as long as the work takes without a bound", async () => {
    expect(await withinBound(later(30, "slow"), Infinity, what)).toBe("slow");
    expect(await withinBound(later(30, "slow"), 0, what)).toBe("slow");
  });

  it("shares one deadline between calls: what the first spent, the second does not get", async () => {
    const deadline = new Deadline(60);
    try {
      expect(await withinBound(later(40, 1), deadline, what)).toBe(1);
      const started = Date.now();
      await expect(withinBound(later(200, 2), deadline, what)).rejects.toBeInstanceOf(TimeBoundExceeded);
      expect(Date.now() - started).toBeLessThan(150);
      expect(deadline.left()).toBeLessThanOrEqual(0);
    } finally {
      deadline.close();
    }
  });
});
