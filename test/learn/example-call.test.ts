import { describe, expect, it } from "vitest";
import { maskArgs } from "../../src/text/mask.js";
import { buildExampleCall, isSharedFormat } from "../../src/learn/example-call.js";
import { call, num, str } from "./learn-fixtures.js";

const ok = (args: Record<string, unknown>) => call("start_recovery", "success", maskArgs(args));

describe("buildExampleCall", () => {
  it("shows the shared masked format and placeholders, never a value", () => {
    const successes = [
      ok({ claim_ref: "CW-104233", file_mb: 12, note: "urgent, Sarah asked" }),
      ok({ claim_ref: "CW-998812", file_mb: 3.5, note: "second attempt" }),
    ];
    const line = buildExampleCall(successes, 2, 2);
    expect(line).toBe('Example call: {"claim_ref": "CW-######", "file_mb": "<number>", "note": "<text>"}');
    for (const value of ["104233", "998812", "12", "3.5", "Sarah", "urgent"]) expect(line).not.toContain(value);
  });

  it("is null until the tool has minFailures refused calls, or without a successful call", () => {
    const successes = [ok({ claim_ref: "CW-104233" })];
    expect(buildExampleCall(successes, 1, 2)).toBeNull();
    expect(buildExampleCall([], 5, 2)).toBeNull();
    expect(buildExampleCall(successes, 2, 2)).not.toBeNull();
  });

  it("shows a format only when every success has the same masked form", () => {
    const successes = [ok({ claim_ref: "CW-104233" }), ok({ claim_ref: "CW-1042" })];
    expect(buildExampleCall(successes, 3, 2)).toBe('Example call: {"claim_ref": "<text>"}');
  });

  it("keeps only arguments every success passed (the optional ones are left out)", () => {
    const successes = [ok({ claim_ref: "CW-104233", cc: "a@b.co" }), ok({ claim_ref: "CW-555555" })];
    expect(buildExampleCall(successes, 2, 2)).toBe('Example call: {"claim_ref": "CW-######"}');
  });

  it("shows masker placeholders shared by all calls, and <value> when kinds disagree", () => {
    const successes = [
      call("t", "success", [str("to", "<email>"), num("n")]),
      call("t", "success", [str("to", "<email>"), str("n", "##")]),
    ];
    expect(buildExampleCall(successes, 2, 2)).toBe('Example call: {"to": "<email>", "n": "<value>"}');
  });

  it("shows <text> for a shared shape with too much fixed", () => {
    const successes = [
      call("t", "success", [str("ref", "CUSTOMER-##")]),
      call("t", "success", [str("ref", "CUSTOMER-##")]),
    ];
    expect(buildExampleCall(successes, 2, 2)).toBe('Example call: {"ref": "<text>"}');
  });
});

describe("isSharedFormat", () => {
  it.each([
    ["CW-######", true],
    ["####-##-##", true],
    ["ORD-#####", true],
    ["cus_****", true],
    ["CLAIM-####", true],
    ["(###) ###-####", true],
    ["###", true],
    ["A-#", true],
    ["AB-#", true],
    ["ABCDEFG-#", false],
    ["AB-CD-EF-##", false],
    ["#-#-#-#-#-#-#-#-#-#", false],
    ["claims-####", false],
    ["Dear Sarah ##", false],
    ["####kg", false],
    ["<text>", false],
    ["-", false],
  ])("%s → %s", (shape, expected) => {
    expect(isSharedFormat(shape)).toBe(expected);
  });
});
