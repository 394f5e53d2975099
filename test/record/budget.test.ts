/**
 * Recording runs past the masking budget (`MASK_BUDGET`, src/text/budget.ts): a 1,000,000-number
 * argument, as the model's tool call through a real `ToolNode` and as a tool's JSON input, and a
 * 1 MB request text. Each run's rows stay under the stated cap, nothing in them is a value, and no
 * other record is lost. Sizes are asserted, not times (times are in `npm run bench -- masking`).
 */
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Ledger } from "../../src/ledger/ledger.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { buildRecords, type RunTrace } from "../../src/record/rows.js";
import { keepFreeText } from "../../src/text/free-text.js";
import { MASK_BUDGET } from "../../src/text/mask.js";
import { buildAgent, echoTool, planScript, ScriptedChatModel } from "../helpers/record-agent.js";

const MILLION = () => Array.from({ length: 1_000_000 }, (_, i) => i * 7.31);
/** A 1 MB request that names a person and an address at its start, then goes on. */
const HUGE_REQUEST = `Please refund Zyxqvort Castellanos at zc@example.com for order ORD-918273. ${"and then check the other orders again please ".repeat(23_000)}`;

const lookup = tool(
  async () => {
    throw new Error("lookup failed for Zyxqvort Castellanos: too many values");
  },
  { name: "lookup", description: "Look values up.", schema: z.object({ values: z.array(z.number()) }) },
);
const note = tool(async ({ to }) => `noted for ${to}`, {
  name: "note",
  description: "Write a note to someone.",
  schema: z.object({ to: z.string() }),
});

const chars = (row: unknown): number => JSON.stringify(row).length;

describe("recording past the masking budget", () => {
  it("a 1M-number argument and a 1 MB request: every row under the cap, values masked, no other record lost", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const recorder = new ToolLessonsCallbackHandler({ ledger, singleTenant: true });
    expect(HUGE_REQUEST.length).toBeGreaterThan(1_000_000);

    // 1. Through a real ToolNode: the model's tool call holds the million numbers; a second call beside it.
    const model = new ScriptedChatModel(
      planScript((step) =>
        step === 0
          ? [
              { name: "lookup", args: { values: MILLION() } },
              { name: "note", args: { to: "Zyxqvort Castellanos" } },
            ]
          : undefined,
      ),
    );
    const agent = buildAgent({ model, tools: [lookup, note] });
    await agent.invoke(
      { messages: [new HumanMessage(HUGE_REQUEST)] },
      { configurable: { thread_id: "huge" }, callbacks: [recorder] },
    );
    // 2. A direct invoke: the recorder gets the million numbers as the tool's JSON input.
    await lookup.invoke({ values: MILLION() }, { callbacks: [recorder] }).catch(() => undefined);
    // 3. An ordinary run after them.
    await buildAgent({
      model: new ScriptedChatModel(planScript((step) => (step === 0 ? [{ name: "echo", args: { n: 7 } }] : undefined))),
      tools: [echoTool],
    }).invoke(
      { messages: [new HumanMessage("echo seven")] },
      { configurable: { thread_id: "small" }, callbacks: [recorder] },
    );
    await recorder.flush();

    const calls = await ledger.listCalls("default");
    const turns = await ledger.listTurns("default");
    expect(calls.map((c) => c.tool).sort()).toEqual(["echo", "lookup", "lookup", "note"]);
    expect(turns).toHaveLength(2);
    const stats = recorder.stats();
    expect(stats.written).toEqual({ calls: 4, turns: 2 });
    expect(stats.failed).toBe(0);
    expect(stats.dropped).toBe(0);

    for (const row of [...calls, ...turns]) {
      expect(chars(row)).toBeLessThan(MASK_BUDGET.maxCallRowChars);
      const text = JSON.stringify(row);
      expect(text).not.toMatch(/Zyxqvort|Castellanos|zc@example|918273/);
    }
    const lookups = calls.filter((c) => c.tool === "lookup");
    for (const row of lookups) {
      // Summarized: the shape and a bounded sample of fingerprints (before the budget: 999,990, a 19 MB row).
      expect(row.args).toHaveLength(1);
      expect(row.args[0]).toMatchObject({ name: "values", kind: "array" });
      expect(row.args[0].shape).toMatch(/^\[<number>(\|…)?\]$/);
      expect(row.fingerprints.length).toBeGreaterThan(0);
      expect(row.fingerprints.length).toBeLessThanOrEqual(MASK_BUDGET.maxFingerprints);
      expect(chars(row)).toBeLessThan(8_192);
    }
    const [bigTurn] = turns.filter((t) => t.calls.length === 2);
    // Clipped to 2,000 characters, then each word not kept read back as `<word>` (at most 3× a 2-letter word).
    expect(bigTurn.request.length).toBeLessThanOrEqual(3 * 2_001);
    // Values went unread (the million numbers), so common words are no reason to keep a word.
    expect(bigTurn.request).toMatch(/^Please <word> <value> at <email> for <word> <value>/);
    expect(calls.find((c) => c.tool === "echo")?.outcome).toBe("success");
  }, 120_000);

  it("the largest row the caps allow stays under maxCallRowChars", () => {
    // Every part at its cap: many arguments with long names, each a long value; a request and an
    // error that JSON must escape character by character.
    const args: Record<string, unknown> = {};
    // Names JSON escapes six characters for one, values whose shapes are as long as a shape may be.
    const nested = { billing_address: { street_name: 1, city_name: "x", postal_code: "ab-12" }, order_id: "ORD-1" };
    for (let i = 0; i < 200; i++) {
      args[`${'\u0001"'.repeat(40)}${i}`] =
        i % 2 === 0 ? `${"Qx".repeat(2_000)} ${i}` : { ...nested, shipping_address: nested, home_address: nested };
    }
    const trace: RunTrace = {
      id: "run-1",
      threadId: "t",
      isChain: true,
      turn: { text: '"\\'.repeat(600_000), index: 0 },
      requested: new Map(),
      calls: [
        {
          tool: "lookup",
          args,
          outcome: "error",
          error: { message: '"\\'.repeat(600_000), name: "Error" },
          source: "callback",
          at: 1,
          order: 1,
        },
        {
          tool: "lookup",
          args: { q: "x" },
          outcome: "success",
          // The raw output, as the callback keeps it: captured (head and tail) when the rows are built.
          output: { raw: '"'.repeat(1_000_000) },
          source: "callback",
          at: 2,
          order: 2,
        },
      ],
    };
    const rows = buildRecords(trace, "t:acme/u:42", "k".repeat(64), [], new Map());
    expect(rows.refused).toBe(0);
    expect(rows.calls).toHaveLength(2);
    const [big] = rows.calls;
    expect(big.args).toHaveLength(MASK_BUDGET.maxArgs + 1);
    expect(big.args[MASK_BUDGET.maxArgs]).toEqual({
      name: "…",
      kind: "object",
      shape: `<${200 - MASK_BUDGET.maxArgs} more>`,
    });
    expect(big.args.every((a) => a.name.length <= MASK_BUDGET.maxArgNameChars)).toBe(true);
    expect(Math.max(...big.args.map((a) => a.shape.length))).toBeGreaterThanOrEqual(150);
    expect(big.fingerprints.length).toBeGreaterThan(0);
    expect(big.fingerprints.length).toBeLessThanOrEqual(MASK_BUDGET.maxFingerprints);
    for (const row of [...rows.calls, rows.turn]) {
      expect(chars({ ...row, v: 1, at: Date.now() })).toBeLessThan(MASK_BUDGET.maxCallRowChars);
    }
    // The largest, for the record: how close the worst case comes to the cap.
    expect(chars(big)).toBeGreaterThan(MASK_BUDGET.maxCallRowChars / 2);
  });

  it("values left unread: a name made of common words, repeated by the tool's error, is not kept for being common", () => {
    // Past the budget, the values are not all read (`oversize`): the name at the end of the array
    // could be any word of the error, so the common vocabulary is no reason to keep one.
    const filler = Array.from({ length: 3_000 }, (_, i) => `recipient number ${i} of the list`);
    const traceWith = (recipients: string[]): RunTrace => ({
      id: "run-1",
      threadId: "t",
      isChain: false,
      requested: new Map(),
      calls: [
        {
          tool: "lookup",
          args: { recipients },
          outcome: "error",
          error: { message: "refund the order for Rose Baker", name: "Error" },
          source: "callback",
          at: 1,
          order: 1,
        },
      ],
    });
    const key = "k".repeat(64);
    const keep = (text: string, allowed: Parameters<typeof keepFreeText>[1]): string =>
      keepFreeText(text, allowed, key, () => false).text;
    const stored = (recipients: string[]): string =>
      buildRecords(traceWith(recipients), "p", key, [], new Map(), keep).calls[0].errorMessage ?? "";

    const unread = stored([...filler, "Rose Baker"]);
    expect(unread).not.toMatch(/rose|baker/i);
    // Its other words are tokens (or values), never the words.
    expect(unread).toMatch(/^<w:[a-p]{12}> /);
    // Every value read: the name is masked as a value, and common words are kept as ever.
    expect(stored(["Rose Baker"])).toBe("refund the order for <value>");
  });
});
