import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemoryStore } from "@langchain/langgraph";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InvalidInput, NotFound } from "../../src/errors.js";
import { lintDescriptions } from "../../src/evaluate/lint-descriptions.js";
import { LessonManager } from "../../src/learn/manager.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { openLedger } from "../../src/ledger/open.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";
import { ToolIndex } from "../../src/routing/tool-index.js";

/**
 * Bad input (issue 44, item 9), each class of it built here, not quoted: tool names that differ
 * only in case or after normalization, malformed arguments to every manager method, ids too long
 * to repeat, and control characters in a ledger path.
 */

const quiet = { failureSink: () => undefined };
const MEGA = "Z".repeat(1 << 20);

/** A catalog tool. */
function toolNamed(name: string, description = `Work out the ${name.replace(/_/g, " ")} of a person.`) {
  return {
    name,
    description,
    schema: {
      type: "object",
      properties: { weight: { type: "number" }, height: { type: "number" } },
      required: ["weight"],
    },
  };
}

/** Spellings of one name: the classes of case change, and of change by normalization. */
function caseVariants(base: string): string[] {
  const upper = base.toUpperCase();
  const title = base.replace(/(^|_)([a-z])/g, (_, sep: string, c: string) => sep + c.toUpperCase());
  const lastUpper = base.replace(/_([a-z]+)$/, (_, word: string) => `_${word.toUpperCase()}`);
  return [...new Set([base, upper, title, lastUpper])];
}
function normalizationVariants(base: string): string[] {
  const variants = [
    base.replace(/e/, "\u0435"), // Cyrillic e
    base.replace(/[a-z]/, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)), // a fullwidth letter
    `${base.slice(0, 3)}\u200b${base.slice(3)}`, // zero-width space
    base.replace(/_/, "\uff3f"), // fullwidth low line
  ];
  return [...new Set(variants)].filter((v) => v !== base);
}

describe("names that differ only in case are two tools; names that differ only after normalization are refused, naming the other", () => {
  const bases = ["calculate_bmi", "get_user", "send_invoice_pdf"];

  it("registration keeps every case spelling as its own card, and refuses each normalization look-alike naming what it reads as", async () => {
    for (const base of bases) {
      const ledger = new Ledger(new InMemoryStore(), quiet);
      const names = [...caseVariants(base), ...normalizationVariants(base)];
      const result = await registerTools(
        ledger,
        names.map((n) => toolNamed(n)),
        { partition: "p" },
      );
      const cards = (await ledger.listCards("p")).map((c) => c.name).sort();
      expect(cards, base).toEqual(caseVariants(base).sort());
      expect(result.lookalikes.map((l) => l.tool).sort()).toEqual(normalizationVariants(base).sort());
      for (const refused of result.lookalikes) expect(caseVariants(base)).toContain(refused.like);
    }
  });

  it("the routing index keeps them apart: each spelling routes to itself", async () => {
    const ledger = new Ledger(new InMemoryStore(), quiet);
    const names = caseVariants("calculate_bmi");
    await registerTools(
      ledger,
      names.map((n, i) => toolNamed(n, `Tool number ${["alpha", "bravo", "charlie", "delta"][i]} for body mass.`)),
      { partition: "p" },
    );
    const index = new ToolIndex({ ledger });
    await index.reindex("p");
    for (const [i, name] of names.entries()) {
      const card = (await ledger.getCard("p", name))!;
      expect(card.name).toBe(name);
      const [vector] = await index.cardVectors("p", card);
      const [best] = await index.routeVector("p", vector, { k: names.length });
      expect(best?.tool, `${i}`).toBe(name);
    }
  });

  it("lint over a catalog holding every variant reports on every tool, and never throws a TypeError", async () => {
    const names = bases.flatMap((b) => [...caseVariants(b), ...normalizationVariants(b)]);
    const report = await lintDescriptions(names.map((n) => toolNamed(n)));
    const linted = new Set(report.findings.map((f) => f.tool));
    for (const name of names) expect(linted.has(name), name).toBe(true);
  });
});

/** Malformed values of each class a script or a web handler might pass. */
const BAD_VALUES: [string, unknown][] = [
  ["null", null],
  ["a number", 7],
  ["a boolean", true],
  ["a list", ["x"]],
  ["a blank string", "   "],
  ["a megabyte string", MEGA],
  ["a control character", "rev\u0000-1"],
  ["a lone surrogate", "rev-\uD800"],
];

type Loose = Record<string, (...args: unknown[]) => Promise<unknown>>;

describe("every LessonManager method refuses bad input with InvalidInput, never repeating it", () => {
  function manager(): Loose {
    const ledger = new Ledger(new InMemoryStore(), quiet);
    return new LessonManager({ ledger, index: new ToolIndex({ ledger }) }) as unknown as Loose;
  }

  /** Each method, with its good arguments; `at` is the argument made bad in turn. */
  const METHODS: [string, unknown[]][] = [
    ["configure", [{}, {}]],
    ["history", ["tool", {}]],
    ["flags", [{}]],
    ["review", [{}]],
    ["apply", ["rev-1", { approvedBy: "ops" }]],
    ["dismiss", ["rev-1", {}]],
    ["undo", ["tool", { approvedBy: "ops" }]],
    ["effects", [{}]],
    ["putRule", [{ tool: "tool", rule: "Always confirm.", priority: "normal", source: "operator" }, {}]],
    ["getRule", ["rule-1", {}]],
    ["listRules", [{}]],
    ["deleteRule", ["rule-1", {}]],
    ["rulesForPrompt", [["tool"], {}]],
    ["rulesJson", [{}]],
    ["promoteRule", ["rule-1", { by: "ops" }]],
    ["evaluateCalls", [{}]],
    ["summarize", [["tool"], {}]],
    ["stats", ["tool", {}]],
    ["memoryFor", ["tool", {}]],
    ["memoryBlock", [["tool"], {}]],
  ];

  it("each argument of each method, replaced by each bad value (or the value in its fields)", async () => {
    const m = manager();
    let refused = 0;
    for (const [method, good] of METHODS) {
      for (let at = 0; at < good.length; at++) {
        const variants: unknown[] = [];
        for (const [, bad] of BAD_VALUES) {
          const arg = good[at];
          if (typeof arg === "string" || Array.isArray(arg)) variants.push(Array.isArray(arg) ? [bad] : bad);
          else if (arg !== null && typeof arg === "object") {
            variants.push(bad === null || typeof bad !== "object" ? (bad ?? null) : bad);
            variants.push({ ...arg, partition: bad });
          }
        }
        for (const variant of variants) {
          const args = good.map((g, i) => (i === at ? variant : g));
          const outcome = await m[method]!(...args).then(
            () => "resolved",
            (error: unknown) => error,
          );
          // Blank partitions or tool lists of a good kind may be fine; a TypeError or a repeated value never is.
          if (outcome === "resolved") continue;
          expect(outcome, `${method} #${at}`).toBeInstanceOf(InvalidInput);
          const message = (outcome as Error).message;
          expect(message.length, `${method} #${at}`).toBeLessThan(600);
          expect(message).not.toContain(MEGA.slice(0, 300));
          refused += 1;
        }
      }
    }
    expect(refused).toBeGreaterThan(200);
  });

  it("review(null) and new LessonManager(null) are InvalidInput, not TypeError", async () => {
    const m = manager();
    await expect(m.review!(null)).rejects.toBeInstanceOf(InvalidInput);
    await expect(m.review!({ partition: MEGA })).rejects.toBeInstanceOf(InvalidInput);
    expect(() => new LessonManager(null as never)).toThrow(InvalidInput);
    expect(() => new LessonManager({} as never)).toThrow(InvalidInput);
  });

  it("NotFound clips the id it names", async () => {
    const ledger = new Ledger(new InMemoryStore(), quiet);
    const error = await ledger.requireRevision("p", MEGA).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFound);
    expect((error as Error).message.length).toBeLessThan(300);
    expect((error as Error).message).toMatch(/\+\d+ characters/);
    expect(JSON.stringify((error as NotFound).context).length).toBeLessThan(400);
  });
});

describe("a control character in a ledger path is refused", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "tl-path-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** Each class: NUL, another C0 control, DEL, a C1 control; at the start, in the middle, at the end. */
  const CONTROLS = ["\u0000", "\u0001", "\u001b", "\u007f", "\u0085"];

  it("by openLedger (option and environment) and by SqliteStore, before any file is made", async () => {
    for (const ch of CONTROLS) {
      for (const name of [`${ch}ledger.db`, `led${ch}ger.db`, `ledger.db${ch}`]) {
        const path = join(dir, name);
        await expect(openLedger({ path, ...quiet, env: {} }), JSON.stringify(name)).rejects.toBeInstanceOf(
          InvalidInput,
        );
        await expect(openLedger({ ...quiet, env: { ledgerPath: path } })).rejects.toBeInstanceOf(InvalidInput);
        expect(() => new SqliteStore(path)).toThrow(InvalidInput);
      }
    }
    expect(readdirSync(dir)).toEqual([]);
    expect(existsSync(join(dir, "led"))).toBe(false);
  });

  it("the refusal names the character and where, not the path", async () => {
    const path = join(dir, `secret-name\u0000.db`);
    const error = await openLedger({ path, ...quiet, env: {} }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/U\+0000/);
    expect((error as Error).message).not.toContain("secret-name");
  });
});
