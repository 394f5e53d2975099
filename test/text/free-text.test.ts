import { describe, expect, it } from "vitest";
import {
  keepFreeText,
  maskNumberWords,
  resolveWordTokens,
  staticAllowedWords,
  wordHash,
  wordToken,
} from "../../src/text/free-text.js";

const KEY = "k".repeat(64);
const ALLOWED = staticAllowedWords(["lookup_order"], ["order_id", "claim_ref"]);
const never = (): boolean => false;

describe("keepFreeText", () => {
  it("keeps common words, tool and argument names, placeholders and masked digits; tokens any other word", () => {
    const kept = keepFreeText(
      "Account holder Margaret Whitfield: order_id <value> not found (code ###)",
      ALLOWED,
      KEY,
      never,
    );
    expect(kept.text).toBe(
      `Account holder ${wordToken(wordHash("Margaret", KEY))} ${wordToken(wordHash("Whitfield", KEY))}: order_id <value> not found (code ###)`,
    );
    expect(kept.text).not.toMatch(/margaret|whitfield/i);
    expect(kept.unlisted.map((u) => u.word)).toEqual(["Margaret", "Whitfield"]);
  });

  it("a name split into common words by '-' or '/', or run together, is one word: tokened whole unless released", () => {
    // Common pieces, capitalized: a name however it is cut (`Whit-field`, `Rose/Baker`, `RoseBaker`).
    const names = [
      "Whit-field",
      "Rose/Baker",
      "Sun-Flower-Field",
      "RoseBaker",
      "Rose_Baker",
      "Mar‐garet",
      "Whit–field",
      "Whit.field",
      "Rose&Baker",
      "WHIT-FIELD",
      "whit-Field",
    ];
    for (const name of names) {
      const kept = keepFreeText(`Please write to ${name} today`, ALLOWED, KEY, never);
      expect(kept.text).toBe(`Please write to ${wordToken(wordHash(name, KEY))} today`);
      expect(kept.unlisted.map((u) => u.word)).toEqual([name]);
      // Released (three callers showed it), it is kept as written.
      const hash = wordHash(name, KEY);
      expect(keepFreeText(`Please write to ${name} today`, ALLOWED, KEY, (h) => h === hash).text).toBe(
        `Please write to ${name} today`,
      );
    }
    // Lower-case compounds and one allowed word written joined are words, as ever; shapes stay shapes.
    const plain = "a follow-up and/or read/write check, E-mail R&D U.S. ORD-##### and COVID-##, ORDER_ID lookup_order";
    expect(keepFreeText(plain, ALLOWED, KEY, never).text).toBe(plain);
  });

  it("a contraction ends a word; an apostrophe inside a name does not keep its first letters", () => {
    expect(keepFreeText("we didn't, they'll, O'Brien", ALLOWED, KEY, never).text).toBe(
      `we didn't, they'll, O'${wordToken(wordHash("Brien", KEY))}`,
    );
  });

  it("keeps a released word in the clear", () => {
    const released = new Set([wordHash("Springfield", KEY)]);
    const kept = keepFreeText("moved to Springfield from Shelbyville", ALLOWED, KEY, (h) => released.has(h));
    expect(kept.text).toBe(`moved to Springfield from ${wordToken(wordHash("Shelbyville", KEY))}`);
  });

  it("keeps the letter prefix of a masked shape, not a prefix standing alone", () => {
    expect(keepFreeText("expected ORD-##### here", ALLOWED, KEY, never).text).toBe("expected ORD-##### here");
    expect(keepFreeText("must start with ORD-", ALLOWED, KEY, never).text).toBe(
      `must start with ${wordToken(wordHash("ORD", KEY))}-`,
    );
  });

  it("tokens hold no digit, differ by key, and fold case and look-alike letters", () => {
    const hash = wordHash("Whitfield", KEY);
    expect(hash).toMatch(/^[a-p]{12}$/);
    expect(wordHash("Whitfield", "another key")).not.toBe(hash);
    expect(wordHash("WHITFIELD", KEY)).toBe(hash);
    expect(wordHash("Whitfi\u0435ld", KEY)).toBe(hash);
  });
});

describe("maskNumberWords", () => {
  it("masks numbers written in words as digits are: dates of birth, years, counts", () => {
    expect(maskNumberWords("born on the fourteenth of March, nineteen eighty-two")).toBe("born on the # of March, #");
    expect(maskNumberWords("in two thousand and four, Twenty-Third")).toBe("in #, #");
    expect(maskNumberWords("for two nights")).toBe("for # nights");
  });

  it("keeps 'one', 'first' and 'second' alone, and words that only contain a number word", () => {
    expect(maskNumberWords("the one I ordered first, a second time; someone often")).toBe(
      "the one I ordered first, a second time; someone often",
    );
  });
});

describe("resolveWordTokens", () => {
  it("reads a released token as its word and any other as <word>, adjacent ones as one", () => {
    const a = wordHash("Margaret", KEY);
    const b = wordHash("Whitfield", KEY);
    const c = wordHash("Springfield", KEY);
    const text = `${wordToken(a)} ${wordToken(b)} of ${wordToken(c)}`;
    expect(resolveWordTokens(text, new Map([[c, "Springfield"]]))).toBe("<word> of Springfield");
    expect(resolveWordTokens(text, new Map())).toBe("<word> of <word>");
    expect(resolveWordTokens("no tokens here", new Map())).toBe("no tokens here");
  });
});
