import { describe, expect, it } from "vitest";
import { InvalidInput } from "../../src/errors.js";
import { decodeLabel, encodeLabel, idFloorAt, timeOrderedId } from "../../src/ledger/keys.js";

describe("idFloorAt", () => {
  it("sorts after every id made before the millisecond and before every id made at or after it", () => {
    const t = 1_790_000_000_000;
    const floor = idFloorAt(t);
    for (const id of [timeOrderedId(t - 1), timeOrderedId(t - 1), timeOrderedId(t - 1000)])
      expect(id < floor).toBe(true);
    for (const id of [timeOrderedId(t), timeOrderedId(t), timeOrderedId(t + 1)]) expect(id > floor).toBe(true);
  });
});

describe("encodeLabel (names encoded once)", () => {
  it("gives the same label from its memory as fresh, past the memory's size too, and still refuses an empty name", () => {
    const names = Array.from({ length: 5000 }, (_, i) => `server.tool_${i}*~%`);
    const first = names.map(encodeLabel);
    expect(names.map(encodeLabel)).toEqual(first);
    expect(first.map(decodeLabel)).toEqual(names);
    expect(encodeLabel("send_email")).toBe("send~5Femail");
    expect(() => encodeLabel("")).toThrow(InvalidInput);
    expect(() => encodeLabel("")).toThrow(InvalidInput);
  });
});
