import { describe, expect, it } from "vitest";
import { allowedWords, checkAllowedWords, commonWords, keepAllowedWords } from "../../src/text/vocabulary.js";
import { vocabularyWords } from "../../src/text/vocabulary-words.js";

const TOOLS = ["send_email", "refer_llu", "wire_money", "lookup_order"];

describe("the shipped common-word list", () => {
  it("is lower-case a-z words, tens of thousands of them, without proper names", () => {
    const words = vocabularyWords();
    expect(words.length).toBeGreaterThan(30_000);
    expect(words.every((w) => /^[a-z]+$/.test(w))).toBe(true);
    const set = commonWords();
    for (const w of ["refund", "order", "courier", "email", "invoice", "weather", "seaside"])
      expect(set.has(w), w).toBe(true);
    for (const name of ["margaret", "whitfield", "sarah", "connor", "london", "paris", "john", "google"])
      expect(set.has(name), name).toBe(false);
  });
});

describe("the shipped common-word list: ordinary words of every dialect", () => {
  it("holds both spellings of a word that has a US and a UK one, in every form", () => {
    const allowed = allowedWords();
    for (const [us, uk] of [
      ["color", "colour"],
      ["organize", "organise"],
      ["organization", "organisation"],
      ["traveling", "travelling"],
      ["center", "centre"],
      ["analyze", "analyse"],
      ["favorite", "favourite"],
      ["catalog", "catalogue"],
      ["neighborhoods", "neighbourhoods"],
      ["personalized", "personalised"],
      ["defense", "defence"],
    ]) {
      expect(allowed.has(us), us).toBe(true);
      expect(allowed.has(uk), uk).toBe(true);
    }
  });

  it("holds common words the word list lacked (among, chatbot, dataset ...), and still no names", () => {
    const allowed = allowedWords();
    for (const w of ["among", "amongst", "chatbot", "chatbots", "dataset", "cryptocurrency", "webpage", "workspace"])
      expect(allowed.has(w), w).toBe(true);
    for (const name of ["lilly", "margaret", "whitfield", "szymanski", "github"])
      expect(allowed.has(name), name).toBe(false);
  });
});

describe("allowedWords", () => {
  it("allows card words, tool names and their parts, common words, by stem", () => {
    const allowed = allowedWords({
      card: ["subrogate_claim: Start subrogation on a CW claim (claimRef)."],
      toolNames: TOOLS,
    });
    for (const w of [
      "subrogation",
      "Subrogate_claim",
      "claimRef",
      "refer_llu",
      "llu",
      "send_email",
      "Refunds",
      "COURIER",
    ]) {
      expect(allowed.has(w), w).toBe(true);
    }
    expect(allowed.verdict("Whitfield")).toBe("unknown");
  });

  it("allows a word shared by two distinct cited requests, counting a group once", () => {
    const requests = [
      { id: "r1", text: "book the Zanzibar suite", group: "u1" },
      { id: "r2", text: "is the zanzibar suite free", group: "u1" },
      { id: "r3", text: "cancel zanzibar", group: "u2" },
      { id: "r4", text: "Whitfield asked", group: "u1" },
      { id: "r5", text: "whitfield again", group: "u1" },
    ];
    const allowed = allowedWords({ requests });
    expect(allowed.has("Zanzibar")).toBe(true);
    expect(allowed.has("whitfield")).toBe(false);
    expect(allowedWords({ requests: requests.map(({ id, text }) => ({ id, text })) }).has("whitfield")).toBe(true);
    expect(allowedWords({ requests, minSharedRequests: 3 }).has("zanzibar")).toBe(false);
  });

  it("never allows an argument value, even a common word, and folds homoglyphs first", () => {
    const allowed = allowedWords({ isValue: (w) => w === "rose" });
    expect(allowed.verdict("Rose")).toBe("value");
    expect(allowed.verdict("R\u043Ese")).toBe("value");
    expect(allowed.verdict("roses")).toBe("allowed");
  });

  it("can drop the common-word list or bring another", () => {
    expect(allowedWords({ vocabulary: false }).has("courier")).toBe(false);
    expect(allowedWords({ vocabulary: new Set(["courier"]) }).has("couriers")).toBe(true);
  });
});

describe("keepAllowedWords and checkAllowedWords", () => {
  const allowed = allowedWords({ toolNames: TOOLS, card: ["claim_ref"] });

  it("masks a person's name in user wording as one <word>", () => {
    const kept = keepAllowedWords("Tell the courier: Margaret Whitfield moved house to the seaside", allowed);
    expect(kept).toEqual({ text: "Tell the courier: <word> moved house to the seaside", masked: ["word"] });
    expect(checkAllowedWords("Tell the courier: Margaret Whitfield moved house", allowed)).toBe("unknown_word");
  });

  it("masks a name in a Not-for line and keeps the tool name", () => {
    expect(keepAllowedWords("Not for Margaret Whitfield; use send_email.", allowed).text).toBe(
      "Not for <word>; use send_email.",
    );
  });

  it("keeps lessons made of card, tool and common words, placeholders and masked shapes", () => {
    for (const line of [
      "claim_ref must look like CW-######; calls with ###### were refused (validation).",
      "Look up claim_ref first; do not guess them: 2 calls failed (not_found).",
      'Example call: {"claim_ref": "CW-######", "to": "<email>"}',
      "Not for weather questions; use lookup_order.",
      "don't send it, I can't",
    ]) {
      expect(keepAllowedWords(line, allowed), line).toEqual({ text: line, masked: [] });
      expect(checkAllowedWords(line, allowed), line).toBeUndefined();
    }
  });

  it("refuses a line that is mostly unknown words, or has none allowed", () => {
    expect(keepAllowedWords("Qwzx Vbnm Plok", allowed).refused).toBe("no_allowed_words");
    expect(keepAllowedWords("send Qwzx Vbnm, Plok", allowed).refused).toBe("too_many_unknown_words");
    expect(keepAllowedWords("send Qwzx Vbnm, Plok", allowed, { maxMaskedShare: 0.9 }).refused).toBeUndefined();
  });

  it("reports a value word first", () => {
    const withValue = allowedWords({ isValue: (w) => w === "rose" });
    expect(checkAllowedWords("ask Rose and Whitfield", withValue)).toBe("value_word");
    expect(keepAllowedWords("ask Rose today", withValue).text).toBe("ask <word> today");
  });

  it("does not take a key's letter fragments for shape prefixes", () => {
    // `sk-proj-Qv` has a capitalized piece: one compound word, masked whole.
    expect(keepAllowedWords("ORD-##### and sk-proj-Qv#TbLm#Nv", allowed).text).toBe(
      "ORD-##### and <word>#<word>#<word>",
    );
    expect(keepAllowedWords("ORD-##### and sk-proj-qv#TbLm#Nv", allowed).text).toBe(
      "ORD-##### and <word>-<word>-<word>#<word>#<word>",
    );
  });
});
