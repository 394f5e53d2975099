import { beforeEach, describe, expect, it } from "vitest";
import { detect } from "../../src/learn/detect.js";
import { evidenceMaps, type VetContext } from "../../src/learn/vet-context.js";
import { vetProposal } from "../../src/learn/vet.js";
import type { CallRecord } from "../../src/ledger/schema.js";
import { call, resetIds, turn } from "./learn-fixtures.js";

/**
 * Issue 29, item 10: a word is "shared by cited records" only across different threads. Two
 * failures of one thread, or of one run without a thread, are one conversation: a name they
 * repeat (the caller's own) is no shared word, and a note quoting it keeps it masked.
 */

const TOOLS = ["lookup_account", "send_email"];
// An older row, stored before free texts were masked: its error still holds a name.
const MESSAGE = "Account holder Brackenridge has no such record";
const NOTE_TEXT = `Look up first; do not guess them: calls failed (not_found) with "${MESSAGE}".`;

beforeEach(() => resetIds());

function failure(extra: Partial<CallRecord>): CallRecord {
  return call("lookup_account", "error", [], { errorClass: "not_found", errorMessage: MESSAGE, ...extra });
}

/** The vet's verdict on a note citing every failed call of `calls`: its kept text, or its refusal. */
function noteVerdict(calls: CallRecord[]): { kept?: string; refused?: string } {
  const td = detect({ turns: [], routes: [], calls, tools: TOOLS }).tools.get("lookup_account")!;
  const ctx: VetContext = {
    tool: "lookup_account",
    card: ["lookup_account", "Look up a customer account by its holder."],
    registeredTools: TOOLS,
    settings: { minFailures: 2 },
    learned: { examples: [], notes: [], notFor: [] },
    ...evidenceMaps(td),
    containsValue: () => false,
  };
  const result = vetProposal(
    { notes: [{ text: NOTE_TEXT, cites: calls.map((c) => c.id) }], examples: [], notFor: [] },
    ctx,
  );
  return result.kept.notes[0] ? { kept: result.kept.notes[0].text } : { refused: result.refused[0]?.reason };
}

describe("words shared by cited records: different threads only", () => {
  it("does not let a word repeated across two failures of one thread pass", () => {
    const verdict = noteVerdict([
      failure({ threadId: "th1", runId: "run1" }),
      failure({ threadId: "th1", runId: "run2" }),
    ]);
    expect(verdict.kept ?? "").not.toMatch(/brackenridge/i);
    expect(verdict.kept ?? verdict.refused).toBeDefined();
  });

  it("does not let a word repeated across failures of one run without a thread pass (each call is not its own group)", () => {
    const verdict = noteVerdict([failure({ runId: "run1" }), failure({ runId: "run1" }), failure({ runId: "run1" })]);
    expect(verdict.kept ?? "").not.toMatch(/brackenridge/i);
  });

  it("lets a word shared by failures of two threads pass (the control: the rule is read at all)", () => {
    const verdict = noteVerdict([
      failure({ threadId: "th1", runId: "run1" }),
      failure({ threadId: "th2", runId: "run2" }),
    ]);
    expect(verdict.kept).toMatch(/Brackenridge/);
  });

  it("groups missed requests by thread: one thread's repeated word is not shared", () => {
    const ctx = (threads: [string, string]): VetContext => ({
      tool: "lookup_account",
      registeredTools: TOOLS,
      settings: {},
      learned: { examples: [], notes: [], notFor: [] },
      failedCallIds: new Set(),
      missedRequests: new Map([
        ["q1", "find the account of Brackenridge"],
        ["q2", "is Brackenridge a customer"],
      ]),
      requestThreads: new Map([
        ["q1", threads[0]],
        ["q2", threads[1]],
      ]),
      confusedRequests: new Map(),
      containsValue: () => false,
    });
    const example = { text: "find the account of Brackenridge", cites: ["q1", "q2"] };
    const oneThread = vetProposal({ notes: [], examples: [example], notFor: [] }, ctx(["th1", "th1"]));
    expect(JSON.stringify(oneThread.kept)).not.toMatch(/brackenridge/i);
    const twoThreads = vetProposal({ notes: [], examples: [example], notFor: [] }, ctx(["th1", "th2"]));
    expect(twoThreads.kept.examples[0]?.text).toMatch(/Brackenridge/);
  });

  it("reads the thread of each miss from the turns", () => {
    const turns = [
      turn("q1", "find the account of Brackenridge", [], { threadId: "th7" }),
      turn("q2", "look it up", [{ tool: "lookup_account" }], { threadId: "th7" }),
    ];
    const td = detect({ turns, routes: [], calls: [], tools: TOOLS }).tools.get("lookup_account")!;
    const maps = evidenceMaps(td);
    for (const id of maps.missedRequests.keys()) expect(maps.requestThreads?.get(id)).toBe("th7");
  });
});
