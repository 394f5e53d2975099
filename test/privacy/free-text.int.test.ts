/**
 * Issue 29, item 10: values that appear only in a tool's error or output, or in the user's own
 * words, never in an argument, and that no detector knows. The corpus's `free_text` families
 * (test/fixtures/make-hostile-corpus.ts, section 8: names, streets and towns, dates of birth in
 * words, order ids of letters only, passwords) through the channels they arrive by: a thrown
 * error, an error ToolMessage (a zod refusal), a tool's output, the user's request, and the
 * request through the route node with learned examples shown. Real LangGraph agents, the real
 * recorder, review with `autoApply`, probes with `showLearnedExamples` off and on.
 *
 * Checked for every planted value: no stored row of the SQLite ledger (every string leaf, by the
 * `tokens` of test/helpers/stored-values.ts), no lesson, routing text or text the model was
 * sent holds its tokens; and the channel test's own finder (verbatim, skeleton, uncommon letter
 * runs) finds it in no sink. The same cases also run in channels.int.test.ts with the whole corpus.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";
import { storedTexts, tokens } from "../helpers/stored-values.js";
import { BENIGN_TEXTS, CHANNELS, type OpenStore, runChannel } from "./channels.js";
import { loadCorpus, storeGroups } from "./corpus.js";
import { evaluateChannel } from "./report.js";

const CASES = loadCorpus().filter((c) => c.tricks.includes("free_text"));
const FORMATS = ["name", "street", "town", "dob-words", "letter-id", "password"];
const CHANNEL_IDS = ["tool-error", "error-toolmessage", "tool-output", "user-turn", "user-turn-routed"];

const dir = mkdtempSync(join(tmpdir(), "tl-free-text-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("free text no detector knows, through every channel it arrives by", () => {
  it("plants every format, several values each, in no argument", () => {
    for (const format of FORMATS)
      expect(CASES.filter((c) => c.tricks.includes(format)).length).toBeGreaterThanOrEqual(3);
    for (const c of CASES) expect(c.args).toBeUndefined();
  });

  it.each(CHANNEL_IDS)(
    "%s: no planted value in any stored row, lesson, routing text or prompt",
    async (id) => {
      const spec = CHANNELS.find((s) => s.id === id)!;
      const files: string[] = [];
      const open: OpenStore = async (channel, onFailure) => {
        const file = join(dir, `${channel}.db`);
        files.push(file);
        const store = await SqliteStore.open(file);
        return { ledger: new Ledger(store, { onFailure }), files: [file, `${file}-wal`], close: () => store.close() };
      };
      const lines: string[] = [];
      const runs = [];
      for (const [g, group] of storeGroups(CASES).entries())
        runs.push(await runChannel(spec, group, { backend: "sqlite", name: `${id}-${g + 1}`, open, console: lines }));

      // The channel test's finder over every sink.
      const figures = evaluateChannel(runs, BENIGN_TEXTS);
      expect(figures.tried).toBe(CASES.length);
      expect(figures.runErrors).toEqual([]);
      expect(figures.leaks).toEqual([]);

      // And plainly, by tokens: every string of every stored row, and every item the sinks hold.
      const values = CASES.flatMap((c) => c.values ?? []);
      const stored = files.map(storedTexts);
      expect(stored.reduce((n, s) => n + s.rows, 0)).toBeGreaterThan(0);
      const items = runs.flatMap((r) => r.items.map((i) => ({ sink: i.sink, text: tokens(i.text) })));
      for (const value of values) {
        expect(
          stored.flatMap((s) => s.hits(value)),
          value,
        ).toEqual([]);
        expect(
          items.filter((i) => i.text.includes(tokens(value))).map((i) => i.sink),
          value,
        ).toEqual([]);
      }
      // The sinks are not empty: lessons were learned from this traffic (notes from the failures,
      // examples from the missed requests) and the routing text and prompts were read.
      const learned = figures.lessons;
      if (spec.traffic === "calls" && spec.failure !== "busy") expect(learned.notes).toBeGreaterThan(0);
      if (spec.traffic === "turns") expect(learned.examples + learned.notFor).toBeGreaterThan(0);
      expect(items.some((i) => i.sink === "routing text")).toBe(true);
      if (spec.routed) expect(items.some((i) => i.sink === "prompt (examples shown)")).toBe(true);
    },
    600_000,
  );
});
