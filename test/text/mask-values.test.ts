import { describe, expect, it } from "vitest";
import {
  collectValues,
  containsFingerprint,
  createMasker,
  isFieldName,
  maskArgs,
  maskRequest,
  maskText,
  scalarLeaves,
  shapeOf,
  valueFingerprints,
} from "../../src/text/mask.js";

const KEY = "test-key-0123456789";

function nest(depth: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = { level: value };
  return value;
}

describe("values at any depth, any array index, and as keys", () => {
  it("masks and fingerprints a value nested 8 levels deep", () => {
    const args = { payload: nest(8, "Margaret Whitfield") };
    expect(maskText("courier for Margaret Whitfield", args)).toBe("courier for <value>");
    expect(containsFingerprint("note about Whitfield", valueFingerprints(args, KEY), KEY)).toBe(true);
  });

  it("masks and fingerprints an array item at index 250 and beyond", () => {
    const list = Array.from({ length: 400 }, (_, i) => `item${i}`);
    list[250] = "Whitfield";
    list[399] = "QZX-77821";
    const args = { list };
    expect(maskText("Whitfield and qzx-77821", args)).toBe("<value> and <value>");
    const fps = new Set(valueFingerprints(args, KEY));
    expect(containsFingerprint("ask Whitfield", fps, KEY)).toBe(true);
  });

  it("treats keys that are not field names as values, in text, fingerprints and shapes", () => {
    const args = { balances: { Margaret_Whitfield: 120, DE89370400440532013000: 5, billing_address: "x" } };
    expect(maskText("Margaret Whitfield paid; DE89370400440532013000 too; billing address ok", args)).toBe(
      "<value> paid; <iban> too; billing address ok",
    );
    expect(maskText("Whitfield paid", args)).toBe("<value> paid");
    const fps = new Set(valueFingerprints(args, KEY));
    expect(containsFingerprint("ask Margaret", fps, KEY)).toBe(true);
    expect(containsFingerprint("the billing address", fps, KEY)).toBe(false);
    expect(shapeOf(args.balances)).toBe("{<key>:<number>,<key>:<number>,billing_address:<text>}");
    expect(JSON.stringify(maskArgs(args))).not.toMatch(/margaret|whitfield|DE89/i);
  });

  it("never takes the tool's own argument names for values", () => {
    const args = { claim_ref: "CW-123456", customer_name: "Whitfield" };
    expect(maskText("claim_ref must look like CW-######, got CW-123456 for Whitfield", args)).toBe(
      "claim_ref must look like CW-######, got <value> for <value>",
    );
    expect(isFieldName("billing_address")).toBe(true);
    expect(isFieldName("orderId")).toBe(true);
    expect(isFieldName("Margaret_Whitfield")).toBe(false);
    expect(isFieldName("margaret_whitfield")).toBe(false);
  });

  it("walks Maps, Sets and Error messages; never throws on BigInt, cycles, functions, symbols or throwing getters", () => {
    const cyclic: Record<string, unknown> = { name: "Whitfield" };
    cyclic.self = cyclic;
    const hostile = {
      big: 123456789012345678901234567890n,
      cyclic,
      fn: () => "Secretname",
      sym: Symbol("Secretname"),
      map: new Map([["Margaret", "Quaxley"]]),
      set: new Set(["Brimble"]),
      err: new Error("Zorvath failed"),
      get broken(): string {
        throw new Error("no");
      },
    };
    expect(() => maskArgs(hostile)).not.toThrow();
    expect(() => valueFingerprints(hostile, KEY)).not.toThrow();
    expect(() => shapeOf(hostile)).not.toThrow();
    expect(maskArgs(hostile).map((a) => [a.name, a.kind, a.shape])).toEqual([
      ["big", "number", "<number>"],
      ["cyclic", "object", "{name:<text>,self:<circular>}"],
      ["fn", "string", "<function>"],
      ["sym", "string", "<symbol>"],
      ["map", "object", "<map>"],
      ["set", "object", "<set>"],
      ["err", "object", "<error>"],
      ["broken", "string", "<unreadable>"],
    ]);
    expect(maskText("Whitfield, Margaret, Quaxley, Brimble, Zorvath, 123456789012345678901234567890", hostile)).toBe(
      "<value>, <value>, <value>, <value>, <value>, <value>",
    );
  });

  it("degrades past the node budget to phrase and token masking, never to a cut-off", () => {
    const list = Array.from({ length: 50 }, (_, i) => `word${i}`);
    list.push("Margaret Whitfield");
    const collected = collectValues({ list }, 10);
    expect(collected.bulk.length).toBeGreaterThan(0);
    expect(maskText("Margaret Whitfield", { list }, { maxNodes: 10 })).toBe("<value>");
    expect(maskText("Whitfield wrote", { list }, { maxNodes: 10 })).toBe("<value> wrote");
    expect(containsFingerprint("Whitfield", valueFingerprints({ list }, KEY, undefined, { maxNodes: 10 }), KEY)).toBe(
      true,
    );
    expect(scalarLeaves({ list })).toContain("Margaret Whitfield");
  });

  it("survives a value nested 100,000 levels deep (no recursion)", () => {
    const deep = nest(100_000, "Whitfield");
    expect(maskText("Whitfield", { deep })).toBe("<value>");
    expect(() => shapeOf(deep)).not.toThrow();
  });
});

describe("the text masker: detectors, echoes, homoglyphs", () => {
  it("masks keys and addresses found only in error text, letters and all", () => {
    const masked = maskText(
      "401: key sk-proj-QvTbLmNvRxsWpYzKdHaHcJf7 and AKIAZ7QWRTYUPLMNB3XQ refused; ship to 221B Baker Street",
    );
    expect(masked).toBe("###: key <key> and <key> refused; ship to <address>");
  });

  it("masks a partial echo of a long value", () => {
    const args = { api_key: "sk-proj-QvTbLmNvRxsWpYzKdHaHcJfyUiOpAsDf" };
    expect(maskText("key ending …yUiOpAsDf was revoked", args)).toBe("key ending ...<value> was revoked");
    expect(maskText("the settings were revoked", args)).toBe("the settings were revoked");
  });

  it("masks a value spelled with homoglyphs or invisible characters", () => {
    const args = { name: "Margaret Whitfield" };
    expect(maskText("M\u0430rg\u0430ret Whit\u200Bfield moved", args)).toBe("<value> moved");
    const fps = new Set(valueFingerprints(args, KEY));
    expect(containsFingerprint("M\u0430rg\u0430ret moved", fps, KEY)).toBe(true);
  });

  it("says what it masked, by kind, never the text", () => {
    const mask = createMasker({ name: "Whitfield" });
    expect(mask("Whitfield at ann@example.org, +44 20 7946 0958")).toEqual({
      text: "<value> at <email>, <phone>",
      masked: ["value", "email", "phone"],
    });
  });

  it("stores the normalized text: NUL, lone surrogates and invisible characters never reach a row", () => {
    expect(maskText("bad\u0000row \uD800 ze\u200Bro")).toBe("bad row \uFFFD zero");
  });

  it("is linear: 10x the input costs about 10x, for one long token and for many tokens, with values", () => {
    const values = { name: "Margaret Whitfield", key: "sk-proj-QvTbLmNvRxsWpYzKdHaHcJfyUiOpAsDf" };
    const mask = createMasker(values);
    const cost = (text: string): number => {
      const t0 = performance.now();
      mask(text);
      return performance.now() - t0;
    };
    const token = (n: number): string => "aZ9".repeat(Math.ceil(n / 3)).slice(0, n);
    const words = (n: number): string => "refund Whitfield ORD-42 ok ".repeat(Math.ceil(n / 27)).slice(0, n);
    for (const make of [token, words]) {
      cost(make(10_000));
      const small = Math.max(cost(make(100_000)), 2);
      const large = cost(make(1_000_000));
      expect(large / small).toBeLessThan(40);
    }
  });
});

describe("maskRequest", () => {
  it("is maskText clipped, so every record of one request holds the same text", () => {
    const values = [{ to: "Whitfield" }];
    const request = `Tell Whitfield ${"x ".repeat(1500)}`;
    expect(maskRequest(request, { values })).toBe(`${maskText(request, values).slice(0, 1999)}…`);
    expect(maskRequest("hi Whitfield", { values })).toBe("hi <value>");
    expect(maskRequest("hi Whitfield", { masker: createMasker(values) })).toBe("hi <value>");
    expect(maskRequest("call 0042")).toBe("call ####");
  });
});
