import { describe, expect, it } from "vitest";
import { gateText, type GateKind } from "../../src/text/gate.js";
import {
  cased,
  digitsWithRepeats,
  inSentence,
  leakOf,
  letterId,
  NAMES,
  nestedArgs,
  password,
  pick,
  rng,
  spellDigits,
  spellLetters,
  spellPhonetic,
  splitName,
  unicodeForm,
} from "./hostile.js";

/**
 * Issue 44 item 3: values spelled out are masked as shape classes, in every kind of text the gate
 * serves, whether or not the value is known as an argument. Each class is generated (see
 * hostile.ts): separators, casing, Unicode forms, position in the sentence, depth in the arguments.
 */

const KINDS: GateKind[] = ["stored", "lesson", "prompt", "log", "rule"];
const PER_CLASS = 80;

interface Case {
  text: string;
  value: string;
  args: Record<string, unknown>;
}

function cases(seed: number, make: (r: () => number) => { value: string; spelled: string }): Case[] {
  const r = rng(seed);
  return Array.from({ length: PER_CLASS }, () => {
    const { value, spelled } = make(r);
    const form = r() < 0.3 ? unicodeForm(r, spelled) : spelled;
    return { text: inSentence(r, form), value, args: nestedArgs(r, value) };
  });
}

const CLASSES: Record<string, Case[]> = {
  "single letters joined by separators": cases(441, (r) => {
    const value = r() < 0.5 ? letterId(r) : pick(r, NAMES);
    return { value, spelled: spellLetters(r, value) };
  }),
  "phonetic-alphabet runs": cases(442, (r) => {
    const value = password(r);
    return { value, spelled: spellPhonetic(r, value) };
  }),
  'digit words with "double" and "triple", words and digits mixed': cases(443, (r) => {
    const value = digitsWithRepeats(r);
    return { value, spelled: spellDigits(r, value) };
  }),
};

describe.each(Object.entries(CLASSES))("hostile corpus: %s", (_name, all) => {
  it("has distinct variants of the class", () => {
    expect(new Set(all.map((c) => c.text)).size).toBeGreaterThan(PER_CLASS * 0.9);
  });

  it.each(KINDS)("kind %s: masked with no argument known (the shape alone)", (kind) => {
    const leaks = all
      .map((c) => ({ c, out: gateText(c.text, { kind }).text }))
      .filter(({ c, out }) => leakOf(out, c.value) !== undefined)
      .map(({ c, out }) => `${JSON.stringify(c.text)} -> ${JSON.stringify(out)}`);
    expect(leaks).toEqual([]);
  });

  it.each(KINDS.filter((k) => k !== "rule"))("kind %s: masked with the value an argument at any depth", (kind) => {
    const leaks = all
      .map((c) => ({ c, out: gateText(c.text, { kind, values: c.args }).text }))
      .filter(({ c, out }) => leakOf(out, c.value) !== undefined)
      .map(({ c, out }) => `${JSON.stringify(c.text)} -> ${JSON.stringify(out)}`);
    expect(leaks).toEqual([]);
  });
});

describe("hostile corpus: names split by punctuation, a space, a slash or a line break", () => {
  const r = rng(444);
  const all = Array.from({ length: PER_CLASS }, () => {
    const value = pick(r, NAMES);
    const split = splitName(r, value);
    const form = r() < 0.3 ? unicodeForm(r, split) : split;
    return { value, text: inSentence(r, form), args: nestedArgs(r, r() < 0.5 ? value : `${pick(r, NAMES)} ${value}`) };
  });

  it.each(KINDS.filter((k) => k !== "rule"))("kind %s: masked where the name is an argument", (kind) => {
    const leaks = all
      .map((c) => ({ c, out: gateText(c.text, { kind, values: c.args }).text }))
      .filter(({ c, out }) => leakOf(out, c.value) !== undefined)
      .map(({ c, out }) => `${JSON.stringify(c.text)} -> ${JSON.stringify(out)}`);
    expect(leaks).toEqual([]);
  });
});

describe("controls: what spells no value is kept", () => {
  it.each([
    "Meet at 10 a.m., e.g. tomorrow, i.e. before noon.",
    "I'm a teacher and I'd like one or two books.",
    "Book a golf hotel in Lima for two nights.",
    "Plan A or plan B, whichever is cheaper.",
    "The order ORD-##### was refunded on 2024-05-01.",
    "Show me the top 3 results for x x x.",
  ])("%s", (text) => {
    for (const kind of KINDS) expect(gateText(text, { kind }).masked).not.toContain("spelled_value");
  });

  it("the leak check itself finds a value left spelled", () => {
    const r = rng(9);
    expect(leakOf(`id ${spellLetters(r, "QXZTRB")} ok`, "QXZTRB")).toBeDefined();
    expect(leakOf("pw kilo lima oscar 7 echo", "klo7e")).toBe("spelled");
    expect(leakOf("four one double one triple five", "4111555")).toBe("spelled");
    expect(leakOf(`name ${cased(r, "whit")}\nfield`, "Whitfield")).toBe("joined");
  });
});
