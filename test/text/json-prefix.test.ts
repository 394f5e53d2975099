import { describe, expect, it } from "vitest";
import { parseJsonPrefix } from "../../src/text/json-prefix.js";
import { Unread } from "../../src/text/mask.js";

describe("parseJsonPrefix: the start of a long JSON input read as a value", () => {
  it("reads a whole short JSON text as JSON.parse does", () => {
    for (const text of [
      '{"a":1,"b":[true,false,null],"c":{"d":"x\\"y\\u00e9"},"e":[],"f":{}}',
      '[1, -2.5e3, "s"]',
      '"plain"',
      "42",
      '  { "k" : [ ] }  ',
    ]) {
      expect(parseJsonPrefix(text, 1000)).toEqual({ value: JSON.parse(text), cut: false });
    }
  });

  it("closes what is open at the cut and marks the unread part", () => {
    const text = JSON.stringify({ to: "Rose Baker", values: Array.from({ length: 10_000 }, (_, i) => i * 7.31) });
    const read = parseJsonPrefix(text, 200)!;
    expect(read.cut).toBe(true);
    const value = read.value as { to: string; values: unknown[] };
    expect(value.to).toBe("Rose Baker");
    expect(value.values.slice(0, 3)).toEqual([0, 7.31, 14.62]);
    // The number cut in two is not read as a smaller number: the unread part stands in its place.
    expect(value.values[value.values.length - 1]).toBe(Unread.instance);
    expect(value.values.slice(0, -1).every((n) => typeof n === "number")).toBe(true);
  });

  it("never reads a number cut at its point or exponent as a smaller number", () => {
    const text = JSON.stringify({ values: [1, 20190.91, 3e-7, 4] });
    for (let n = 1; n < text.length; n++) {
      const read = parseJsonPrefix(text, n);
      expect(read, text.slice(0, n)).toBeDefined();
      const values = (read!.value as { values?: unknown }).values;
      for (const v of Array.isArray(values) ? values : [values ?? Unread.instance])
        expect([1, 20190.91, 3e-7, 4, Unread.instance]).toContain(v);
    }
  });

  it("keeps the start of a string cut in two, and of a key's value", () => {
    const read = parseJsonPrefix(`{"q":"${"word ".repeat(100)}"}`, 50)!;
    expect(read.cut).toBe(true);
    expect((read.value as { q: string }).q).toBe("word ".repeat(100).slice(0, 44));
    const atKey = parseJsonPrefix(`{"a":1,"b":${"9".repeat(100)}}`, 14)!;
    expect(atKey.value).toEqual({ a: 1, b: Unread.instance });
  });

  it("drops an escape cut in two instead of failing", () => {
    const read = parseJsonPrefix(`["ab\\u00e9cd", "x\\u00e9${"y".repeat(50)}"]`, 21)!;
    expect(read.value).toEqual(["abécd", "x"]);
  });

  it("answers undefined for text that is not JSON", () => {
    expect(parseJsonPrefix("hello world", 5)).toBeUndefined();
    expect(parseJsonPrefix('{"a" 1}', 100)).toBeUndefined();
    expect(parseJsonPrefix('{"a":1', 100)).toBeUndefined();
    expect(parseJsonPrefix("[1,]x", 100)).toBeUndefined();
  });

  it("reads only the characters it is given, however long the text", () => {
    const text = JSON.stringify({ values: Array.from({ length: 1_000_000 }, (_, i) => i) });
    const read = parseJsonPrefix(text, 32_768)!;
    expect(read.cut).toBe(true);
    expect(
      JSON.stringify((read.value as { values: unknown[] }).values.filter((v) => v !== Unread.instance)).length,
    ).toBeLessThanOrEqual(32_768);
  });
});
