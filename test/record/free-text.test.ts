import { InMemoryStore } from "@langchain/langgraph";
import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import {
  freeTextWords,
  NO_REGISTERED_WORDS,
  RegisteredWordsCache,
  registeredWords,
  storedFreeText,
} from "../../src/record/free-text.js";
import { gateText } from "../../src/text/gate.js";
import { createMasker } from "../../src/text/mask.js";
import { tokens } from "../helpers/stored-values.js";

/** Issue 29, item 10: a stored free text keeps only the words of the lessons' allow-list. */

const CARD = {
  name: "lookup_account",
  author: {
    description: "Look up a Contoso account by its holder.",
    argNames: ["holder_name"],
    schema: {},
  },
};
const REGISTERED = registeredWords([CARD, { ...CARD, name: "send_email", author: { ...CARD.author } }]);
const stored = (text: string, tools = ["lookup_account"]): string =>
  storedFreeText(text, createMasker({}), freeTextWords(REGISTERED, tools)).text;

describe("a stored free text", () => {
  it.each([
    ["a name", "Account holder Ottoline Brackenridge has no such record", "Ottoline Brackenridge"],
    ["a town beside an address", "Account holder 42 Elmbridge Road, Springfield has no such record", "Springfield"],
    [
      "a date of birth in words",
      "born the twelfth of March nineteen eighty-four",
      "twelfth of March nineteen eighty-four",
    ],
    ["an order id of letters", "no order found under reference QXRTVBKM", "QXRTVBKM"],
    ["a password", "login rejected: the password Xylofrumpet is wrong", "Xylofrumpet"],
  ])("masks %s", (_what, text, value) => {
    const out = stored(text);
    expect(out).toContain("<word>");
    expect(tokens(out)).not.toContain(tokens(value));
  });

  it("keeps the tool's card words, registered tool names and common words", () => {
    expect(stored("Contoso holder_name missing; try send_email instead")).toBe(
      "Contoso holder_name missing; try send_email instead",
    );
    // Another tool's card is not this tool's: its description's words are not allowed here.
    expect(stored("Contoso is down", ["send_email_only"])).toBe("<word> is down");
  });

  it("is the gate's own rule: without an allow-list a stored text keeps its words, as before", () => {
    expect(gateText("Account holder Brackenridge", { kind: "stored" }).text).toBe("Account holder Brackenridge");
    const gated = gateText("Account holder Brackenridge", { kind: "stored", allowed: freeTextWords(REGISTERED, []) });
    expect(gated).toEqual({ text: "Account holder <word>", masked: ["word"] });
    expect(gated.refused).toBeUndefined();
  });
});

describe("the recorder's registered words", () => {
  it("reads a partition's cards, and again when a run calls a tool it does not know", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const cache = new RegisteredWordsCache(ledger);
    expect((await cache.of("p", [])).toolNames).toEqual([]);
    const t = tool(async () => "ok", {
      name: "lookup_account",
      description: "Look up a Contoso account.",
      schema: z.object({}),
    });
    await registerTools(ledger, [t], { partition: "p" });
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    const words = await cache.of("p", ["lookup_account"]);
    expect(words.toolNames).toEqual(["lookup_account"]);
    expect(freeTextWords(words, ["lookup_account"]).has("Contoso")).toBe(true);
  });

  it("masks more, never less, when the store cannot be read", async () => {
    const ledger = new Ledger(new InMemoryStore());
    ledger.listCards = async () => {
      throw new Error("store down");
    };
    expect(await new RegisteredWordsCache(ledger).of("p", ["lookup_account"])).toBe(NO_REGISTERED_WORDS);
  });
});
