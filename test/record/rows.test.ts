import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { InvalidInput } from "../../src/errors.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { CallRecordSchema, SCHEMA_VERSION, TurnRecordSchema } from "../../src/ledger/schema.js";
import { isBuilt } from "../../src/ledger/trusted.js";
import { errorInfo } from "../../src/record/error-class.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { writerSettings } from "../../src/record/options.js";
import { buildRecords, type PendingCall, type RunTrace } from "../../src/record/rows.js";
import { caseArgs, loadCorpus } from "../privacy/corpus.js";

/**
 * The recorder's rows are appended without a second schema pass (`ledger/trusted.ts`): they must
 * be of the schema by construction. Here every case of the hostile corpus (its text as the
 * request, an error and an output; its arguments, BigInts and deep nests included) is built into
 * rows, and every row parses against the ledger's schema as it is.
 */
const KEY = "ab".repeat(32);

function traceOf(text: string, args: Record<string, unknown>, i: number): RunTrace {
  const at = 1_700_000_000_000 + i;
  const calls: PendingCall[] = [
    {
      tool: "lookup_order",
      args,
      outcome: "error",
      error: errorInfo(new Error(text)),
      latencyMs: 1.25,
      tokens: 40,
      source: "callback",
      at,
      order: 1,
    },
    {
      tool: "send_email",
      args: undefined,
      input: JSON.stringify({ body: text }),
      outcome: "success",
      output: { raw: text },
      source: "callback",
      at,
      order: 2,
    },
    { tool: "refund", args, outcome: "error", error: errorInfo(text), source: "tool_message", at, order: 3 },
  ];
  return {
    id: `run-${i}`,
    threadId: `thread-${i}`,
    isChain: true,
    turn: { text, index: 0, ...(i % 2 === 0 ? { id: `msg-${i}` } : {}) },
    requested: new Map(),
    calls,
  };
}

describe("rows the recorder builds are of the ledger's schema by construction", () => {
  it("every call and turn row of the hostile corpus parses, unchanged, and is marked built", () => {
    const cases = loadCorpus();
    expect(cases.length).toBeGreaterThan(500);
    let rows = 0;
    cases.forEach((c, i) => {
      const built = buildRecords(traceOf(c.text, caseArgs(c), i), "t:acme/u:sam", KEY, [], new Map());
      expect(built.refused).toBe(0);
      for (const call of built.calls) {
        const row = { ...call, v: SCHEMA_VERSION };
        const parsed = CallRecordSchema.safeParse(row);
        expect(parsed.success, `${c.id}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
        expect(parsed.data).toEqual(row);
        expect(isBuilt(call)).toBe(true);
        rows += 1;
      }
      expect(built.turn).toBeDefined();
      const turn = { ...built.turn!, v: SCHEMA_VERSION, at: 1 };
      const parsed = TurnRecordSchema.safeParse(turn);
      expect(parsed.success, `${c.id}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      expect(parsed.data).toEqual(turn);
      expect(isBuilt(built.turn!)).toBe(true);
      rows += 1;
    });
    expect(rows).toBe(cases.length * 4);
  });

  it("a call whose tool name no store can key by is left out and counted", () => {
    const trace = traceOf("x", { a: 1 }, 0);
    const built = buildRecords({ ...trace, calls: [{ ...trace.calls[0], tool: " " }] }, "p", KEY, [], new Map());
    expect(built).toMatchObject({ calls: [], refused: 1 });
  });

  it("a row not built by the package is still checked by the ledger (a copy is not trusted)", () => {
    const [call] = buildRecords(traceOf("x", { a: 1 }, 0), "p", KEY, [], new Map()).calls;
    expect(isBuilt({ ...call })).toBe(false);
  });
});

describe("what enters from outside is checked where it enters", () => {
  it("an error rule naming no error class is refused when the recorder is made", () => {
    const rules = [{ errorClass: "boom" as never, test: /x/ }];
    expect(() => writerSettings({ errorRules: rules })).toThrow(InvalidInput);
    expect(() => writerSettings({ errorRules: [{ errorClass: "timeout", test: /x/ }] })).not.toThrow();
  });

  it("a model's token count that is not finite is not kept (the call is)", async () => {
    const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
    const handler = new ToolLessonsCallbackHandler({ ledger, singleTenant: true, failureSink: () => undefined });
    const serialized = { lc: 1, type: "not_implemented" as const, id: ["tool"] };
    const call = { id: "c1", name: "echo", args: { n: 1 }, type: "tool_call" as const };
    const ai = new AIMessage({
      content: "",
      tool_calls: [call],
      usage_metadata: { input_tokens: 1, output_tokens: 1, total_tokens: Number.POSITIVE_INFINITY },
    });
    handler.handleChainStart(serialized, { messages: [new HumanMessage("go")] }, "root", undefined, [], {});
    handler.handleLLMEnd({ generations: [[{ text: "", message: ai } as never]] }, "llm", "root");
    handler.handleToolStart(serialized, '{"n":1}', "tool", "root", [], {}, "echo", "c1");
    void handler.handleToolEnd("ok", "tool");
    void handler.handleChainEnd({}, "root");
    expect(await handler.flush()).toMatchObject({ written: 2, lost: 0 });
    const [row] = await ledger.listCalls("default");
    expect(row.tool).toBe("echo");
    expect(row.tokens).toBeUndefined();
  });
});
