import { describe, expect, it } from "vitest";
import { gateText } from "../../src/text/gate.js";
import { maskPrivateData } from "../../src/text/mask.js";
import { normalizeText } from "../../src/text/normalize.js";

/** Each format people write, by kind: the placeholder it must become, in rules and stored rows alike. */
const FORMATS: Record<string, { placeholder: string; cases: string[] }> = {
  phone: {
    placeholder: "<phone>",
    cases: [
      "415.555.0132",
      "4155550132",
      "415\u200B555\u200B0132",
      "415\u2060555\u20600132",
      "+49 (0)30 1234567",
      "555-0132",
      "\u0664\u0661\u0665\u0665\u0665\u0665\u0660\u0661\u0663\u0662",
      "\u096A\u0967\u096B\u096B\u096B\u096B\u0966\u0967\u0969\u0968",
      "\uFF14\uFF11\uFF15-\uFF15\uFF15\uFF15-\uFF10\uFF11\uFF13\uFF12",
      "four one five five five five zero one three two",
    ],
  },
  card: {
    placeholder: "<card>",
    cases: [
      "4111.1111.1111.1111",
      "4111 1111-1111.1111",
      "4111-1111.1111 1111",
      "four one one one one one one one one one one one one one one one",
      "\u0664\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661",
    ],
  },
  ssn: { placeholder: "<ssn>", cases: ["123-45-6789", "123 45 6789", "\uFF11\uFF12\uFF13-45-6789"] },
  passport: {
    placeholder: "<passport>",
    cases: ["passport no. X12345678", "Passport number: 533380006", "driver's license D1234-5678"],
  },
  email: {
    placeholder: "<email>",
    cases: [
      "bob (at) example (dot) com",
      "bob(at)example.com",
      "bob [at] example [dot] co [dot] uk",
      "bob at example dot com",
      "bob{at}example{dot}org",
    ],
  },
};

describe("detectors as wide as the formats people write", () => {
  for (const [kind, { placeholder, cases }] of Object.entries(FORMATS)) {
    it(`masks every ${kind} format in a rule's text and in a stored row`, () => {
      for (const value of cases) {
        const sentence = `Never contact them at ${value} again.`;
        const rule = maskPrivateData(sentence);
        expect(rule.text, value).toContain(placeholder);
        const digits = normalizeText(value).replace(/\D/g, "");
        if (digits.length >= 4) expect(rule.text, value).not.toContain(digits.slice(0, 4));
        const stored = gateText(sentence, { kind: "stored" });
        expect(stored.masked.length, value).toBeGreaterThan(0);
      }
    });
  }

  it("keeps ordinary text: dates, versions, amounts, times, ids, words with at and dot", () => {
    for (const text of [
      "Meet at noon, then at the station.",
      "Version 2.3.1 shipped on 2024-01-31 for 4821.77 EUR at 12:30.",
      "Order INV-2024-0042 and ORD-918273 are late.",
      "Look at the dot product of the vectors.",
      "The population was 1796271252 in the model.",
    ]) {
      expect(maskPrivateData(text).masked, text).toEqual([]);
    }
  });
});
