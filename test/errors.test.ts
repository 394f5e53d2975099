import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { isToolLessonsError, StoreUnavailable, ToolLessonsError, VetRefusal } from "../src/errors.js";

describe("isToolLessonsError", () => {
  it("holds for the base and every subclass, and for nothing else", () => {
    expect(isToolLessonsError(new ToolLessonsError("x"))).toBe(true);
    expect(isToolLessonsError(new StoreUnavailable("x"))).toBe(true);
    expect(isToolLessonsError(new VetRefusal("x", { context: {} } as never))).toBe(true);
    for (const other of [
      new Error("x"),
      new TypeError("x"),
      "ToolLessonsError",
      null,
      undefined,
      { name: "ToolLessonsError" },
    ])
      expect(isToolLessonsError(other)).toBe(false);
  });

  it("holds for an error from another copy of the package (another realm)", () => {
    const foreign: unknown = runInNewContext(
      "class ToolLessonsError extends Error {}; class StoreUnavailable extends ToolLessonsError {}; new StoreUnavailable('x')",
    );
    expect(foreign instanceof ToolLessonsError).toBe(false);
    expect(isToolLessonsError(foreign)).toBe(true);
  });
});
