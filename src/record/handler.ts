import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import type { LLMResult } from "@langchain/core/outputs";
import type { ChainValues } from "@langchain/core/utils/types";
import { InvalidInput, ToolLessonsError } from "../errors.js";
import { DEFAULT_PARTITION } from "../ledger/keys.js";
import { isRecord } from "../internal.js";
import { type CallerSeen, callerInMetadata, settleCaller } from "./attribution.js";
import type { ThreadCallers } from "../caller/thread-callers.js";
import { errorInfo, type ErrorInfo } from "./error-class.js";
import { RecordingFailures } from "./failures.js";
import {
  DEFAULT_RECORDING_OPTIONS,
  type FlushOptions,
  type FlushResult,
  type RecordingStats,
  type ToolLessonsCallbackHandlerOptions,
  writerSettings,
} from "./options.js";
import { isToolMessage, toolMessagesIn } from "./output.js";
import type { PartitionSpec } from "../caller/partition.js";
import { latestHumanTurn, messageRole, messagesOf } from "../caller/request.js";
import { isEvidenceCall, type PendingCall, type RequestedCall, type RunTrace } from "./rows.js";
import { RecordWriter } from "./writer.js";

/** LangGraph's input node: it sees the raw input, before the reducers give messages ids. */
const START_NODE = "__start__";
/** Errors LangGraph throws through tools to steer the graph: control flow, not failures. */
const CONTROL_FLOW_ERRORS: ReadonlySet<string> = new Set([
  "GraphInterrupt",
  "NodeInterrupt",
  "GraphBubbleUp",
  "ParentCommand",
]);

interface StartedTool {
  root: RootRun;
  tool: string;
  toolCallId?: string;
  input: string;
  startedAt: number;
}

/** Everything known about one top-level run (a graph invocation) until it ends. */
interface RootRun extends RunTrace {
  /** The caller as the run's metadata names it, settled against the thread's when the run ends. */
  caller: CallerSeen;
  /** True while `turn` comes from the root's raw input rather than a node's state. */
  turnFromInput: boolean;
  requested: Map<string, RequestedCall>;
  startedCallIds: Set<string>;
  messageCallIds: Set<string>;
  /** Calls the model asked for that neither started nor were found refused: while 0, outputs are not searched. */
  unresolved: number;
  calls: PendingCall[];
  members: Set<string>;
  order: number;
}

function asString(value: unknown): string | undefined {
  if (typeof value === "string" && value !== "") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

/**
 * Records every tool call of an agent, and one turn per request, into the ledger. Pass it in
 * `callbacks` to `graph.invoke` / `graph.stream` (or any runnable):
 *
 * ```ts
 * const recorder = new ToolLessonsCallbackHandler({ ledger });
 * await graph.invoke(input, {
 *   configurable: { thread_id },
 *   metadata: { user_id },
 *   callbacks: [recorder],
 * });
 * await recorder.flush(); // before exit, or when the records must be readable now
 * ```
 *
 * What it records, and never records, is described in `docs/recording.md`. Calls whose
 * arguments fail the tool's schema never reach tool callbacks; they are found from the error
 * `ToolMessage`s the tool node returns, joined to the model's tool calls by `tool_call_id`.
 *
 * This module turns callback events into finished runs; `rows.ts` builds their masked rows and
 * `writer.ts` buffers and writes them. It never throws into the run: records are kept in memory
 * until their run ends, then buffered and written in batches. The one wait is back-pressure: a
 * run that ends while the buffer is full behind a healthy store waits for room (at most
 * `maxWaitMs`); a failing store never holds a run up. See `docs/recording.md`.
 */
export class ToolLessonsCallbackHandler extends BaseCallbackHandler {
  name = "tool_lessons";

  private readonly callers: ThreadCallers;
  private readonly resolver: PartitionSpec | undefined;
  private readonly singleTenant: boolean;
  private readonly failures: RecordingFailures;
  private readonly writer: RecordWriter;
  /** Run id → the root run it belongs to (chain and tool runs: the possible parents). */
  private readonly runs = new Map<string, RootRun>();
  private readonly tools = new Map<string, StartedTool>();

  constructor(options: ToolLessonsCallbackHandlerOptions) {
    const awaitHandlers = options.awaitHandlers ?? DEFAULT_RECORDING_OPTIONS.awaitHandlers;
    // Retriever and custom events carry nothing the recorder needs: skip them.
    super({ _awaitHandler: awaitHandlers, ignoreRetriever: true, ignoreCustomEvent: true });
    if (!options?.ledger) {
      throw new InvalidInput("ToolLessonsCallbackHandler needs a `ledger` (new Ledger(store)).");
    }
    this.callers = options.callers ?? options.ledger.callers;
    this.resolver = options.partition;
    this.singleTenant = options.singleTenant ?? DEFAULT_RECORDING_OPTIONS.singleTenant;
    this.failures = new RecordingFailures(options.failureSink ?? DEFAULT_RECORDING_OPTIONS.failureSink);
    this.writer = new RecordWriter(options.ledger, writerSettings(options), this.failures, !awaitHandlers);
    options.ledger.registerRecorder(this);
    // The key of the fingerprints, asked for now so that the first run's rows need not wait for
    // it. The ledger keeps it (or, when this read fails, tries again when the writer asks).
    options.ledger.fingerprintKey(DEFAULT_PARTITION).catch(() => undefined);
  }

  /** The handler is a shared sink: copies (made by some LangChain paths) are the same object. */
  override copy(): this {
    return this;
  }

  // ---------------------------------------------------------------- public

  /**
   * Write everything buffered and wait for it, at most `timeoutMs` (default `flushTimeoutMs`).
   * Runs still open are written when they end. A store that fails is tried once more now; its
   * records stay buffered for later tries and are counted in `inFlight`. Never rejects: write
   * failures go to `failureSink`.
   */
  flush(options: FlushOptions = {}): Promise<FlushResult> {
    return this.writer.flush(options);
  }

  /** Counters since the handler was made. */
  stats(): RecordingStats {
    return this.writer.stats(new Set(this.runs.values()).size);
  }

  /** Records dropped because the buffer was full. */
  get dropped(): number {
    return this.writer.dropped;
  }

  // ---------------------------------------------------------------- callbacks

  // The callback manager calls handleChainStart as (chain, inputs, runId, parentRunId, tags,
  // metadata, runType, runName): the parameter order of @langchain/core's runtime and of its
  // own tracers. (Its .d.ts lists runType fourth and parentRunId eighth; both are strings.)
  override handleChainStart(
    _chain: Serialized,
    inputs: ChainValues,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    _runType?: string,
    runName?: string,
  ): void {
    this.guard("handleChainStart", () => {
      const parent = parentRunId !== undefined ? this.runs.get(parentRunId) : undefined;
      const root = parent ?? this.openRoot(runId, metadata, true);
      this.runs.set(runId, root);
      root.members.add(runId);
      if (root.threadId === undefined) root.threadId = asString(metadata?.thread_id);
      this.observeInputs(root, inputs, parent === undefined || runName === START_NODE);
    });
  }

  override handleChainEnd(outputs: ChainValues, runId: string, _parentRunId?: string): Promise<void> | void {
    return this.guard("handleChainEnd", () => {
      const root = this.runs.get(runId);
      if (!root) return;
      this.observeOutputs(root, outputs);
      this.runs.delete(runId);
      if (root.id === runId) return this.finish(root);
    });
  }

  override handleChainError(_error: unknown, runId: string, _parentRunId?: string): Promise<void> | void {
    return this.guard("handleChainError", () => {
      const root = this.runs.get(runId);
      if (!root) return;
      this.runs.delete(runId);
      if (root.id === runId) return this.finish(root);
    });
  }

  override handleLLMEnd(output: LLMResult, _runId: string, parentRunId?: string): void {
    this.guard("handleLLMEnd", () => {
      const root = parentRunId !== undefined ? this.runs.get(parentRunId) : undefined;
      if (!root) return;
      const generations = output.generations.flat();
      for (const generation of generations) {
        const message: unknown = (generation as { message?: unknown }).message;
        this.registerAiMessage(root, message, generations.length === 1 ? llmOutputTokens(output) : undefined);
      }
    });
  }

  override handleToolStart(
    _tool: Serialized,
    input: string,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
    toolCallId?: string,
  ): void {
    this.guard("handleToolStart", () => {
      const parent = parentRunId !== undefined ? this.runs.get(parentRunId) : undefined;
      const root = parent ?? this.openRoot(runId, metadata, false);
      this.runs.set(runId, root);
      root.members.add(runId);
      if (root.threadId === undefined) root.threadId = asString(metadata?.thread_id);
      const requested = toolCallId !== undefined ? root.requested.get(toolCallId) : undefined;
      if (toolCallId !== undefined && !root.startedCallIds.has(toolCallId)) {
        if (requested && !root.messageCallIds.has(toolCallId)) root.unresolved -= 1;
        root.startedCallIds.add(toolCallId);
      }
      this.tools.set(runId, {
        root,
        tool: runName || requested?.name || "unknown",
        ...(toolCallId !== undefined ? { toolCallId } : {}),
        input,
        startedAt: performance.now(),
      });
    });
  }

  override handleToolEnd(output: unknown, runId: string, _parentRunId?: string): Promise<void> | void {
    return this.guard("handleToolEnd", () => {
      const started = this.tools.get(runId);
      if (!started) return this.unseenStart("handleToolEnd");
      const failed = isToolMessage(output) && output.status === "error";
      return this.endTool(
        runId,
        started,
        failed ? "error" : "success",
        failed ? errorInfo(output.content) : undefined,
        failed ? undefined : { raw: isToolMessage(output) ? output.content : output },
      );
    });
  }

  override handleToolError(error: unknown, runId: string, _parentRunId?: string): Promise<void> | void {
    return this.guard("handleToolError", () => {
      const started = this.tools.get(runId);
      if (!started) return this.unseenStart("handleToolError");
      const info = errorInfo(error);
      if (CONTROL_FLOW_ERRORS.has(info.name)) {
        this.tools.delete(runId);
        this.runs.delete(runId);
        if (started.root.id === runId) return this.finish(started.root);
        return;
      }
      return this.endTool(runId, started, "error", info);
    });
  }
  /**
   * A tool run ended whose start never reached this handler: LangChain could not hand it over
   * (its input does not serialize, e.g. a BigInt argument of a direct `tool.invoke`). The call is
   * lost; it is counted and reported, never silently dropped.
   */
  private unseenStart(event: string): void {
    this.writer.lose(1);
    const message =
      "A tool run ended that the recorder never saw start, so the call was not recorded: LangChain could not " +
      "pass its input to callbacks (an argument that does not serialize to JSON, such as a BigInt). " +
      "Pass JSON-serializable arguments (e.g. a BigInt as a string).";
    this.failures.report("unseen_start", message, new ToolLessonsError(message), { event, records: 1 });
  }

  // ---------------------------------------------------------------- run tracking

  private openRoot(runId: string, metadata: Record<string, unknown> | undefined, isChain: boolean): RootRun {
    return {
      id: runId,
      caller: callerInMetadata(metadata, this.resolver, this.failures),
      isChain,
      turnFromInput: false,
      requested: new Map(),
      startedCallIds: new Set(),
      messageCallIds: new Set(),
      unresolved: 0,
      calls: [],
      members: new Set(),
      order: 0,
    };
  }

  /**
   * Learn the request from a chain's input messages. A node's state (where LangGraph's
   * messages reducer has given every message an id) wins over the graph's raw input, so the id
   * matches what a node computes with `requestIdFor(thread_id, state.messages)`; once the
   * request has an id it is settled.
   */
  private observeInputs(root: RootRun, inputs: unknown, isRawInput: boolean): void {
    const messages = messagesOf(inputs);
    if (!messages || messages.length === 0) return;
    if (root.turn === undefined || (root.turn.id === undefined && !isRawInput) || (root.turnFromInput && !isRawInput)) {
      const turn = latestHumanTurn(messages);
      if (turn) {
        root.turn = turn;
        root.turnFromInput = isRawInput;
      }
    }
    // A run resumed after an interrupt may reach the tool node without a model step of its own.
    const last = messages[messages.length - 1];
    if (messageRole(last) === "ai") this.registerAiMessage(root, last, undefined);
  }

  private registerAiMessage(root: RootRun, message: unknown, fallbackTokens: number | undefined): void {
    if (!isRecord(message) || !Array.isArray(message.tool_calls) || message.tool_calls.length === 0) return;
    const calls = message.tool_calls.filter(
      (c): c is { id: string; name: string; args?: unknown } =>
        isRecord(c) && typeof c.id === "string" && c.id !== "" && typeof c.name === "string",
    );
    const fresh = calls.filter((c) => !root.requested.has(c.id));
    if (fresh.length === 0) return;
    const total = usageTokens(message.usage_metadata) ?? fallbackTokens;
    const share = total !== undefined ? total / message.tool_calls.length : undefined;
    for (const call of fresh) {
      root.order += 1;
      if (!root.startedCallIds.has(call.id)) root.unresolved += 1;
      root.requested.set(call.id, {
        name: call.name,
        args: isRecord(call.args) && !Array.isArray(call.args) ? call.args : {},
        ...(share !== undefined ? { tokens: share } : {}),
        order: root.order,
      });
    }
  }

  /** Error `ToolMessage`s of calls the model asked for that never reached a tool callback. */
  private observeOutputs(root: RootRun, outputs: unknown): void {
    // Every call asked for has started (or was found): no output can hold a refusal to record.
    if (root.unresolved === 0) return;
    for (const message of toolMessagesIn(outputs)) {
      if (message.status !== "error") continue;
      const id = message.tool_call_id;
      if (typeof id !== "string" || root.startedCallIds.has(id) || root.messageCallIds.has(id)) continue;
      const requested = root.requested.get(id);
      if (!requested) continue;
      root.messageCallIds.add(id);
      root.unresolved -= 1;
      root.calls.push({
        tool: (typeof message.name === "string" && message.name) || requested.name || "unknown",
        args: requested.args,
        outcome: "error",
        error: errorInfo(message.content),
        ...(requested.tokens !== undefined ? { tokens: requested.tokens } : {}),
        source: "tool_message",
        at: Date.now(),
        order: requested.order,
      });
    }
  }

  private endTool(
    runId: string,
    started: StartedTool,
    outcome: "success" | "error",
    error: ErrorInfo | undefined,
    output?: { raw: unknown },
  ): Promise<void> | undefined {
    const { root } = started;
    this.tools.delete(runId);
    this.runs.delete(runId);
    const requested = started.toolCallId !== undefined ? root.requested.get(started.toolCallId) : undefined;
    let order = requested?.order;
    if (order === undefined) {
      root.order += 1;
      order = root.order;
    }
    root.calls.push({
      tool: started.tool,
      args: requested?.args,
      ...(requested ? {} : { input: started.input }),
      outcome,
      ...(error ? { error } : {}),
      ...(output ? { output } : {}),
      latencyMs: Math.round((performance.now() - started.startedAt) * 1000) / 1000,
      ...(requested?.tokens !== undefined ? { tokens: requested.tokens } : {}),
      source: "callback",
      at: Date.now(),
      order,
    });
    if (root.id === runId) return this.finish(root);
    return undefined;
  }

  private finish(root: RootRun): Promise<void> | undefined {
    for (const id of root.members) {
      this.runs.delete(id);
      this.tools.delete(id);
    }
    root.members.clear();
    const hasTurn = root.isChain && root.turn !== undefined;
    const records = root.calls.filter(isEvidenceCall).length + (hasTurn ? 1 : 0);
    if (records === 0) return undefined;
    const settled = settleCaller(root.caller, root.threadId, records, {
      callers: this.callers,
      singleTenant: this.singleTenant,
      failures: this.failures,
    });
    if (settled.partition === undefined) {
      if (settled.lost === "withheld") this.writer.withhold(records);
      else this.writer.lose(records);
      return undefined;
    }
    const { partition, caller } = settled;
    return this.writer.admit({ trace: root, partition, ...(caller !== undefined ? { caller } : {}), records });
  }

  private guard(event: string, body: () => Promise<void> | void | undefined): Promise<void> | void {
    try {
      return body() ?? undefined;
    } catch (error) {
      this.failures.report(
        "callback",
        `A recorder callback failed (${event}); the run goes on, what it was recording may be incomplete.`,
        error,
        { event },
      );
    }
  }
}

/**
 * A token count as the rows store it: a finite number, else none. Checked here, where it enters,
 * so that the rows built from it need no second check (`rows.ts`).
 */
function finiteTokens(value: number): number | undefined {
  return Number.isFinite(value) ? value : undefined;
}

/** Total tokens of a message's `usage_metadata` (total, else input + output). */
function usageTokens(usage: unknown): number | undefined {
  if (!isRecord(usage)) return undefined;
  if (typeof usage.total_tokens === "number") return finiteTokens(usage.total_tokens);
  if (typeof usage.input_tokens === "number" || typeof usage.output_tokens === "number") {
    return finiteTokens((Number(usage.input_tokens) || 0) + (Number(usage.output_tokens) || 0));
  }
  return undefined;
}

/** Token usage some providers report only in `llmOutput.tokenUsage`. */
function llmOutputTokens(output: LLMResult): number | undefined {
  const usage = output.llmOutput?.tokenUsage;
  if (!isRecord(usage)) return undefined;
  return typeof usage.totalTokens === "number" ? finiteTokens(usage.totalTokens) : undefined;
}
