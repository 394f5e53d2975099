import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  containsFingerprint,
  fingerprint,
  maskArgs,
  maskText,
  normalise,
  shapeOf,
  textFingerprints,
  valueFingerprints,
} from "../../src/text/mask.js";

const KEY = "test-key-0123456789";

describe("shapeOf", () => {
  it.each([
    ["ORD-12345", "ORD-#####"],
    ["ORD12345", "ORD#####"],
    ["2024-01-31", "####-##-##"],
    ["4821.77", "####.##"],
    ["+1 (555) 123-4567", "+# (###) ###-####"],
    ["12:30", "##:##"],
    ["cus_A1b2", "cus_****"],
    ["v2.3.1", "v#.#.#"],
    ["INV-2024-0042", "INV-####-####"],
    ["2024-Q1", "####-Q#"],
    ["sarah.jones42", "*****.*****##"],
    ["bob@example.com", "<email>"],
    ["https://shop.example.com/orders/918273", "<url>"],
    ["www.example.com", "<url>"],
    ["Sarah", "<text>"],
    ["please refund my order", "<text>"],
    ["supercalifragilistic", "<text>"],
    ["", "<empty>"],
  ])("%j → %j", (value, shape) => {
    expect(shapeOf(value)).toBe(shape);
  });

  it("summarises non-strings by kind, never by value", () => {
    expect(shapeOf(4821.77)).toBe("<number>");
    expect(shapeOf(true)).toBe("<boolean>");
    expect(shapeOf(null)).toBe("<null>");
    expect(shapeOf(["a@b.co", "c@d.co"])).toBe("[<email>]");
    expect(shapeOf([1, "ORD-1"])).toBe("[<number>|ORD-#]");
    expect(shapeOf({ zip: "94107", "Sarah Connor": 1 })).toBe("{zip:#####,<key>:<number>}");
    expect(shapeOf([])).toBe("[]");
  });

  it("keeps long nested values bounded", () => {
    const deep = { a: { b: { c: { d: { e: "x" } } } } };
    expect(shapeOf(deep)).toBe("{a:{b:{c:{…}}}}");
    const wide = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`field_${i}`, "ORD-1"]));
    expect(shapeOf(wide).length).toBeLessThanOrEqual(160);
  });
});

describe("maskArgs", () => {
  it("gives names, kinds and shapes, never values", () => {
    const args = {
      order_id: "ORD-918273",
      amount: 4821.77,
      to: "sarah@example.com",
      note: "Sarah Connor",
      urgent: false,
      tags: ["vip"],
    };
    const masked = maskArgs(args);
    expect(masked).toEqual([
      { name: "order_id", kind: "string", shape: "ORD-######" },
      { name: "amount", kind: "number", shape: "<number>" },
      { name: "to", kind: "string", shape: "<email>" },
      { name: "note", kind: "string", shape: "<text>" },
      { name: "urgent", kind: "boolean", shape: "<boolean>" },
      { name: "tags", kind: "array", shape: "[<text>]" },
    ]);
    const json = JSON.stringify(masked);
    for (const planted of ["918273", "4821", "sarah", "Connor", "vip"])
      expect(json.toLowerCase()).not.toContain(planted.toLowerCase());
  });
});

describe("maskText", () => {
  it("masks digits, emails and URLs", () => {
    expect(maskText("Order 918273 for bob@example.com, see https://x.example.com/o/1")).toBe(
      "Order ###### for <email>, see <url>",
    );
  });

  it("masks every argument value and value token, case-insensitively, as whole words", () => {
    const values = { name: "Sarah Connor", order: "ORD-918273", amount: 4821.77 };
    expect(maskText("Refund 4821.77 to SARAH connor for ord-918273", values)).toBe(
      "Refund <value> to <value> for <value>",
    );
    expect(maskText("sarah asked about order 918273", values)).toBe("<value> asked about order <value>");
    // Whole words only, and the format part of an id stays.
    expect(maskText("Sarahs' ORD prefix", values)).toBe("Sarahs' ORD prefix");
  });

  it("matches a value however it is written, as the fingerprints do", () => {
    const values = { order: "ORD-918273", name: "Sarah Connor" };
    expect(maskText("ord_918273 / Ord 918273 / ORD-918273", values)).toBe("<value> / <value> / <value>");
    expect(maskText("Connor, Sarah", values)).toBe("<value>, <value>");
    expect(maskText("no values here: 42", values)).toBe("no values here: ##");
  });

  it("does not re-mask its own placeholders", () => {
    expect(maskText("mail bob@example.com", { channel: "email" })).toBe("mail <email>");
  });
});

describe("fingerprints", () => {
  const args = { to: "bob@example.com", order: "ORD-12345" };
  const fps = new Set(valueFingerprints(args, KEY));

  it("normalise: NFKC, lower case, tokens joined by one space", () => {
    expect(normalise("ORD-12345")).toBe("ord 12345");
    expect(normalise("  Ｏrd_12345 ")).toBe("ord 12345");
    expect(fingerprint("ORD-12345", KEY)).toBe(fingerprint("ord 12345", KEY));
    expect(fingerprint("ORD-12345", KEY)).toMatch(/^[0-9a-f]{16}$/);
    expect(fingerprint("ORD-12345", "another key")).not.toBe(fingerprint("ORD-12345", KEY));
  });

  it("is plain HMAC-SHA256 of the normalised text, truncated: any other component can compute it", () => {
    const expected = createHmac("sha256", KEY).update("ord 12345").digest("hex").slice(0, 16);
    expect(fingerprint("ORD-12345", KEY)).toBe(expected);
    expect(valueFingerprints({ order: "ORD-12345" }, KEY)).toContain(expected);
    // A memo changes nothing but the work done.
    const memo = new Map<string, Map<string, string>>();
    expect(valueFingerprints({ a: "ORD-12345", b: "ORD-12345 again" }, KEY, memo)).toEqual(
      valueFingerprints({ a: "ORD-12345", b: "ORD-12345 again" }, KEY),
    );
    expect(memo.size).toBeGreaterThan(0);
  });

  it("catches a text that contains an argument value", () => {
    expect(containsFingerprint("Email bob@example.com about ORD-12345", fps, KEY)).toBe(true);
    expect(containsFingerprint("Order 12345 was late", fps, KEY)).toBe(true);
    expect(containsFingerprint("write to BOB today", fps, KEY)).toBe(true);
  });

  it("does not catch the format of a value (the ORD prefix is format, not value)", () => {
    expect(containsFingerprint("Order ids need the ORD- prefix", fps, KEY)).toBe(false);
    expect(containsFingerprint("Pass the order id as ORD-#####", fps, KEY)).toBe(false);
  });

  it("fingerprints numbers by their digit string", () => {
    const money = new Set(valueFingerprints({ amount: 4821.77 }, KEY));
    expect(containsFingerprint("refund 4821.77 now", money, KEY)).toBe(true);
    expect(containsFingerprint("refund the amount now", money, KEY)).toBe(false);
  });

  it("skips tokens shorter than 3 chars but keeps the whole value", () => {
    const short = new Set(valueFingerprints({ id: "ORD-12" }, KEY));
    expect(containsFingerprint("the id is ORD-12", short, KEY)).toBe(true);
    expect(containsFingerprint("12 items", short, KEY)).toBe(false);
  });

  it("finds multi-token values in longer texts", () => {
    const fpsName = new Set(valueFingerprints({ customer: { name: "Sarah Connor" } }, KEY));
    expect(containsFingerprint("Never email Sarah Connor again", fpsName, KEY)).toBe(true);
    const text = textFingerprints("a b c d e", KEY);
    expect(text).toContain(fingerprint("b c d e", KEY));
    expect(text).toContain(fingerprint("a b c d e", KEY));
  });

  it("holds hashes only", () => {
    const json = JSON.stringify([...fps]);
    expect(json).not.toMatch(/bob|example|12345/i);
  });
});

describe("shapeOf keeps letters as format only where a prefix sits", () => {
  it("keeps a leading prefix and one or two letters elsewhere, masks a longer run after the start", () => {
    expect(shapeOf("ORD-12345")).toBe("ORD-#####");
    expect(shapeOf("v2.3.1")).toBe("v#.#.#");
    // A piece of a key echoed in another argument keeps none of its letters.
    expect(shapeOf("2VZHSQ")).toBe("#*****");
    expect(shapeOf("INV-2024-ABC")).toBe("INV-####-***");
    expect(shapeOf("A1-B2-XY")).toBe("A#-B#-XY");
  });
});
