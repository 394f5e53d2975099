import { describe, expect, it } from "vitest";
import { toolNamedIn } from "../../src/rules/aliases.js";
import { captureEdicts } from "../../src/rules/capture.js";
import { renderRulesBlock } from "../../src/prompt/rules-block.js";
import type { Rule } from "../../src/rules/model.js";

const COPIES = [
  "send_email\u{E0041}",
  "send\u200B_email",
  "send_\u202Eemail",
  "\uFF53\uFF45\uFF4E\uFF44_\uFF45\uFF4D\uFF41\uFF49\uFF4C",
];

describe("edicts bind exact registered names", () => {
  it("'Never use send_email for my boss.' binds send_email, never a copy with a hidden character", () => {
    for (const copy of COPIES) {
      for (const tools of [
        ["send_email", copy],
        [copy, "send_email"],
      ]) {
        expect(toolNamedIn("Never use send_email for my boss.", tools), JSON.stringify(tools)).toBe("send_email");
        expect(captureEdicts("Never use send_email for my boss.", { tools }).map((c) => c.tool)).toEqual([
          "send_email",
        ]);
      }
      expect(captureEdicts("Never email my boss.", { tools: [copy], calledTools: [copy] }).map((c) => c.tool)).toEqual([
        "*",
      ]);
    }
  });
});

describe("no bidi or invisible character is printed in a prompt block", () => {
  it("the rules block prints a tool name and a rule without them", () => {
    const rule = (tool: string, text: string): Rule => ({
      v: 1,
      id: `r-${tool.length}`,
      partition: "u:a",
      tool,
      rule: text,
      priority: "critical",
      source: "user_explicit",
      tags: [],
      createdAt: 1,
      updatedAt: 1,
    });
    const block = renderRulesBlock([rule("send_\u202Eemail\u{E0041}", "Never\u200B email\u2066 Sarah.")], {});
    const text = block.text;
    expect(text).not.toMatch(/[\u200B-\u200F\u202A-\u202E\u2066-\u2069\u{E0000}-\u{E007F}]/u);
    expect(text).toMatch(/send_email/);
  });
});
