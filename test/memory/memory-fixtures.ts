import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { timeOrderedId } from "../../src/ledger/keys.js";
import type { CallRecord, EvaluatedCall, OutputSummary } from "../../src/ledger/schema.js";
import type { EvaluationInput } from "../../src/memory/types.js";

/** Test fixtures of tool memory: call records, window rows, evaluation inputs and a scripted chat model. */

let clock = 1_700_000_000_000;

/** A call record as the recorder writes it (masked), with a fresh time-ordered id. */
export function callRecord(tool: string, overrides: Partial<CallRecord> = {}): CallRecord {
  clock += 1000;
  return {
    v: 1,
    id: timeOrderedId(clock),
    partition: "p",
    tool,
    runId: "run",
    request: "find the pricing page",
    args: [{ name: "query", kind: "string", shape: "<text>" }],
    fingerprints: [],
    outcome: "success",
    latencyMs: 20,
    tokens: 50,
    output: output("Found # results: pricing, plans, billing."),
    source: "callback",
    at: clock,
    ...overrides,
  };
}

/** An output summary. */
export function output(text: string, flags: Partial<OutputSummary> = {}): OutputSummary {
  return { text, chars: text.length, empty: false, truncated: false, zeroCount: false, ...flags };
}

/** A window row. */
export function row(overrides: Partial<EvaluatedCall> = {}): EvaluatedCall {
  clock += 1000;
  const id = overrides.id ?? timeOrderedId(clock);
  return {
    v: 1,
    id,
    partition: "p",
    tool: "search",
    at: clock,
    success: true,
    latencyMs: 20,
    tokens: 50,
    args: [{ name: "query", kind: "string", shape: "<text>" }],
    fingerprints: [],
    summary: "Succeeded in 20 ms.",
    evaluation: "It executed without error and its output shows no problem.",
    score: 1,
    signals: [],
    evaluator: "deterministic",
    key: `k-${id}`,
    evaluatedAt: clock,
    ...overrides,
  };
}

/** An evaluation input. */
export function input(overrides: Partial<EvaluationInput> = {}): EvaluationInput {
  return {
    callId: "c1",
    tool: "search",
    description: "Search the docs.",
    requiredArgs: ["query"],
    request: "find the pricing page",
    args: [{ name: "query", kind: "string", shape: "<text>" }],
    outcome: "success",
    output: output("Found # results."),
    latencyMs: 20,
    slowLatencyFactor: 3,
    ...overrides,
  };
}

/** What the scripted model does with one request: a reply text, or an error to throw; it may wait first. */
export type ModelStep = (messages: BaseMessage[], call: number) => Promise<string> | string;

/**
 * A chat model with no tool calling (so no structured output: replies are read as JSON text),
 * whose replies come from a script. It counts calls and the most it had in flight at once, and
 * honours an abort signal like a provider client.
 */
export class ScriptedReplyModel extends BaseChatModel {
  calls = 0;
  inFlight = 0;
  maxInFlight = 0;
  readonly seen: BaseMessage[][] = [];

  constructor(private readonly step: ModelStep) {
    super({});
  }

  _llmType(): string {
    return "scripted-reply";
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const call = this.calls++;
    this.seen.push(messages);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      const text = await abortable(Promise.resolve(this.step(messages, call)), options.signal);
      return { generations: [{ text, message: new AIMessage(text) }] };
    } finally {
      this.inFlight -= 1;
    }
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error("aborted"));
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Wait `ms`. */
export const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** An error shaped like a provider's rate limit (HTTP 429). */
export function rateLimitError(retryAfterSeconds?: number): Error {
  const error = new Error("429 Too Many Requests") as Error & { status: number; headers?: Record<string, string> };
  error.status = 429;
  if (retryAfterSeconds !== undefined) error.headers = { "retry-after": String(retryAfterSeconds) };
  return error;
}

/** A valid evaluation reply. */
export const GOOD_REPLY = JSON.stringify({
  summary: "Searched the docs and found relevant pages.",
  evaluation: "The right tool with a well-formed query; the output answers the request.",
  score: 1,
  issues: [],
});
