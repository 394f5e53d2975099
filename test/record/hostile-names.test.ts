import { describe, expect, it } from "vitest";
import { errorInfo } from "../../src/record/error-class.js";
import { RegisteredNames } from "../../src/record/registered-names.js";
import {
  buildRecords,
  type PendingCall,
  type RunTrace,
  UNREGISTERED_ARG,
  UNREGISTERED_TOOL,
} from "../../src/record/rows.js";
import { WordReleases } from "../../src/record/word-releases.js";
import type { ToolCard } from "../../src/ledger/schema.js";
import { staticAllowedWords } from "../../src/text/free-text.js";
import { cased, letterId, NAMES, password, pick, rng, unicodeForm } from "../text/hostile.js";

/**
 * Issue 44 items 1 and 2, as a hostile corpus: names the model writes (tool names it makes up,
 * argument names outside the schema) are masked like values and never join the allow-list; a word
 * of free text is released only by three distinct callers, never by one caller's threads.
 */

const KEY = "cd".repeat(32);
const PARTITION = "t:acme";

function card(name: string, argNames: string[]): ToolCard {
  return {
    v: 1,
    partition: PARTITION,
    name,
    author: { description: `The ${name.replace(/_/g, " ")} tool.`, argNames, schema: null },
    augmented: null,
    learned: { examples: [], notes: [], notFor: [], exampleCall: null },
    version: 1,
    createdAt: 0,
    updatedAt: 0,
  } as unknown as ToolCard;
}

const CARDS = [card("check_account", ["account_id"]), card("refund_order", ["order_id", "amount"])];

/** A secret or a person's name, in the shapes a model puts into a name. */
function privateName(r: () => number): string {
  const name = pick(r, NAMES);
  return pick(r, [
    `${name.toLowerCase()}.${pick(r, NAMES).toLowerCase()}@contoso-mail.net`,
    `sk-proj-${letterId(r)}${password(r)}${letterId(r)}Zq81`,
    `${cased(r, pick(r, NAMES))}_${name.toLowerCase()}`,
    name,
    `4111111111111111`,
    `${name}${letterId(r)}`,
  ]);
}

function hostileRuns(seed: number, n: number): { trace: RunTrace; secrets: string[] }[] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const secret = privateName(r);
    const person = pick(r, NAMES);
    const form = r() < 0.3 ? unicodeForm(r, secret) : secret;
    const tool = pick(r, [`mail_${form}`, `charge_${form}`, form, `lookup_${form.replace(/[^A-Za-z0-9]/g, "_")}`]);
    const argName = pick(r, [form, `${person.toLowerCase()}_${pick(r, NAMES).toLowerCase()}`, `${person}`]);
    const calls: PendingCall[] = [
      // A made-up tool: answered "not found" by the tool node, no callback.
      {
        tool,
        args: { [argName]: 1 },
        outcome: "error",
        error: errorInfo(new Error(`Tool "${tool}" not found.`)),
        source: "tool_message",
        at: i,
        order: 1,
      },
      // A registered tool with an argument the schema does not have.
      {
        tool: "check_account",
        args: { account_id: "A-1", [argName]: "x" },
        outcome: "error",
        error: errorInfo(new Error(`Unknown field ${argName} for ${person}`)),
        source: "callback",
        at: i,
        order: 2,
      },
    ];
    const trace: RunTrace = {
      id: `run-${i}`,
      threadId: `thread-${i}`,
      isChain: true,
      turn: { text: `Check the account of ${person} ${argName.replace(/_/g, " ")} please`, index: 0, id: `m-${i}` },
      requested: new Map([["c1", { name: tool, args: { [argName]: 1 }, order: 1 }]]),
      calls,
    };
    return { trace, secrets: [secret, argName, person, ...argName.split(/[_\s]+/).filter((p) => p.length >= 4)] };
  });
}

describe("hostile corpus: names the model writes are masked like values", () => {
  it("no tool or argument name the app did not register reaches a row, nor joins the allow-list", async () => {
    const names = new RegisteredNames();
    const trust = await names.of(PARTITION, async () => CARDS);
    const releases = new WordReleases();
    const leaks: string[] = [];
    for (const { trace, secrets } of hostileRuns(4401, 150)) {
      const rows = buildRecords(
        trace,
        PARTITION,
        KEY,
        [],
        new Map(),
        (text, allowed) =>
          releases.keep(text, { partition: PARTITION, thread: trace.threadId!, caller: "u-1" }, allowed, KEY),
        trust,
      );
      const json = JSON.stringify(rows).toLowerCase();
      for (const secret of secrets) {
        const needle = secret.toLowerCase();
        // A made-up name is a value: never in a row, whatever its form (mask shapes aside).
        if (needle.length >= 4 && !/^\d+$/.test(needle) && json.includes(needle))
          leaks.push(`${secret} in ${json.slice(0, 300)}`);
      }
      expect(rows.calls[0].tool).toBe(UNREGISTERED_TOOL);
      expect(rows.calls[1].tool).toBe("check_account");
      expect(rows.calls[1].args.map((a) => a.name)).toEqual(["account_id", UNREGISTERED_ARG]);
      expect(rows.turn?.calls.map((c) => c.tool)).toEqual([UNREGISTERED_TOOL, "check_account"]);
    }
    expect(leaks).toEqual([]);
  });

  it("control: registered names stay names, and a tool that ran is the app's", async () => {
    const trust = await new RegisteredNames().of(PARTITION, async () => CARDS);
    const trace: RunTrace = {
      id: "r",
      threadId: "t",
      isChain: false,
      requested: new Map(),
      calls: [
        {
          tool: "refund_order",
          args: { order_id: "O-1", amount: 5 },
          outcome: "success",
          source: "callback",
          at: 0,
          order: 1,
        },
        { tool: "echo_back", args: { text: "hi" }, outcome: "success", source: "callback", at: 0, order: 2 },
      ],
    };
    const rows = buildRecords(trace, PARTITION, KEY, [], new Map(), undefined, trust);
    expect(rows.calls.map((c) => [c.tool, c.args.map((a) => a.name)])).toEqual([
      ["refund_order", ["order_id", "amount"]],
      ["echo_back", ["text"]],
    ]);
  });

  it("the allow-list takes registered names only", () => {
    const allowed = staticAllowedWords(["check_account"], ["account_id"]);
    expect(allowed.has("account")).toBe(true);
    expect(allowed.has("Ottoline")).toBe(false);
  });
});

describe("hostile corpus: release only on three distinct callers", () => {
  it("over random traffic, a word is in the clear only once three callers showed it", () => {
    const r = rng(4402);
    for (let round = 0; round < 40; round++) {
      const releases = new WordReleases();
      const word = `${pick(r, NAMES)}${letterId(r).toLowerCase()}`;
      const text = `Account holder ${word} has no such record`;
      const callers = new Set<string>();
      for (let k = 0; k < 25; k++) {
        // One caller many times, unknown callers, a few others: in any order.
        const caller = r() < 0.5 ? "same" : r() < 0.3 ? undefined : `c${Math.floor(r() * 4)}`;
        const out = releases.keep(
          text,
          { partition: PARTITION, thread: `t${Math.floor(r() * 1000)}`, ...(caller ? { caller } : {}) },
          staticAllowedWords([], []),
          KEY,
        );
        if (caller !== undefined) callers.add(caller);
        expect(out.includes(word), `${[...callers]} ${out}`).toBe(callers.size >= 3);
      }
    }
  });
});
