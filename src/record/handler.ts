import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import type { Serialized } from "@langchain/core/load/serializable";
import type { LLMResult } from "@langchain/core/outputs";
import type { ChainValues } from "@langchain/core/utils/types";
import { InvalidInput, PartitionUnresolved, RecordingDropped, ToolLessonsError } from "../errors.js";
import { timeOrderedId } from "../ledger/keys.js";
import type { Ledger } from "../ledger/ledger.js";
import { type ThreadCallers, threadCallersOf } from "./callers.js";
import {
  CallRecordSchema,
  type CallRecord,
  type ErrorClass,
  type NewRecord,
  type OutputSummary,
  SCHEMA_VERSION,
  TurnRecordSchema,
  type TurnRecord,
} from "../ledger/schema.js";
import { classifyError, type ErrorInfo, type ErrorRule, errorInfo } from "./error-class.js";
import { gateText, redactError, redactForLog } from "../text/gate.js";
import { findAimedAtModel } from "../text/injection.js";
import { isStorableName } from "../text/normalize.js";
import {
  createMasker,
  type FingerprintMemo,
  type Masker,
  maskArgs,
  maskRequest,
  valueFingerprints,
} from "../text/mask.js";
import { type PartitionSource, type PartitionSpec, resolveCaller } from "./partition.js";
import { type HumanTurn, hashedRequestId, latestHumanTurn, messageRole, messagesOf } from "./request.js";
import { clip, isRecord, oneLine } from "../internal.js";

/** Where a recording problem happened, handed to {@link ToolLessonsCallbackHandlerOptions.onError}. */
export interface RecordingErrorContext {
  /** `event`: handling a callback; `write`: appending to the ledger; `drop`: the buffer was full. */
  stage: "event" | "write" | "drop";
  /** The callback method, for `event`. */
  event?: string;
  /** Records lost with this error (not written, or dropped). */
  records?: number;
}

/** Options of {@link ToolLessonsCallbackHandler}. */
export interface ToolLessonsCallbackHandlerOptions {
  /** Where records go. */
  ledger: Ledger;
  /**
   * Names the partition of a run from its callback metadata: a resolver, or a namespace template
   * such as `"t:{tenant_id}/u:{user_id}"`. By default `tenant_id`, `user_id` and `agent_id` are
   * read from the metadata (see `docs/partitions.md`). Callbacks do not see `configurable` or v1
   * `context`: a run whose metadata names no caller is filed under the partition the route node
   * (or middleware) resolved for its thread, when one did.
   * @default reads tenant_id / user_id / agent_id from metadata
   */
  partition?: PartitionSpec;
  /**
   * Where the route node or middleware tell the recorder which caller each thread belongs to
   * (callbacks see no `configurable` or v1 `context`).
   * @default the ledger's own (`threadCallersOf(ledger)`), shared with the nodes and middleware over it
   */
  callers?: ThreadCallers;
  /**
   * Receives every recording failure (a ledger write that failed, records dropped, a callback
   * that threw). Recording failures are never thrown into the agent's run.
   * @default console.warn with a "[tool-lessons]" prefix
   */
  onError?: (error: unknown, context: RecordingErrorContext) => void;
  /**
   * Most records (calls and turns) waiting to be written: buffered, or in a write the store has
   * not answered. This bounds the handler's memory in records. When it is
   * full, a run's end waits for room (see `maxWaitMs`) behind a healthy store; behind a store
   * that fails, or with `awaitHandlers: false`, new records are dropped, counted in
   * `stats().dropped` and reported once with the reason.
   * @default 10000
   */
  maxBuffer?: number;
  /**
   * Longest a finished run waits for room in a full buffer before its records are dropped, in
   * milliseconds (back-pressure: with `awaitHandlers`, the run's `invoke` resolves when its
   * records are in the buffer). Only a store slower than the runs, or one that hangs, makes a run
   * wait this long; a store that fails never holds a run up.
   * @default 10000
   */
  maxWaitMs?: number;
  /**
   * Most records appended in one store batch. A buffer holding this many is written at once,
   * without waiting for `flushEveryMs` or for the event loop to be free, so a burst of runs
   * that never yields to the event loop is still written as it goes.
   * @default 500
   */
  batchSize?: number;
  /**
   * How long finished records wait to be batched before they are written, in milliseconds (a
   * full batch is written at once). `0` starts a write as soon as a run ends; runs that end
   * while a write is out are batched into the next one.
   * @default 0
   */
  flushEveryMs?: number;
  /**
   * How long `flush()` waits at most when it is given no `timeoutMs`, in milliseconds; a store
   * that hangs cannot make it hang. `Infinity` waits for every record.
   * @default 30000
   */
  flushTimeoutMs?: number;
  /**
   * Longest pause between two tries of a store that failed, in milliseconds. Records stay in
   * the buffer (bounded by `maxBuffer`) and are written when the store answers again; the
   * pause starts at 50 ms and doubles up to this.
   * @default 5000
   */
  maxRetryDelayMs?: number;
  /**
   * Have LangChain await this handler's callbacks (they only buffer, so this costs little), so
   * that every record of a run is in the buffer when `invoke` resolves and `await flush()`
   * writes it, and a full buffer can hold the run's end back until there is room. With `false`
   * callbacks run in LangChain's background queue; `flush()` then waits for that queue first,
   * and a full buffer drops records (the queue is shared: it is never made to wait).
   * @default true
   */
  awaitHandlers?: boolean;
  /**
   * Extra error-class rules, tried before the built-in table (`record/error-class.ts`).
   * @default []
   */
  errorRules?: readonly ErrorRule[];
}

/**
 * Defaults of {@link ToolLessonsCallbackHandlerOptions} (`ledger` is required; `partition` has no
 * value of its own: without one, the built-in resolver reads the metadata; `callers` is the ledger's own).
 */
export const DEFAULT_RECORDING_OPTIONS: Readonly<
  Required<Omit<ToolLessonsCallbackHandlerOptions, "ledger" | "partition" | "callers">>
> = Object.freeze({
  onError: (error: unknown, context: RecordingErrorContext) =>
    console.warn(
      `[tool-lessons] recording failed (${context.stage}${context.event ? ` ${context.event}` : ""}): ${String(error)}`,
    ),
  maxBuffer: 10_000,
  maxWaitMs: 10_000,
  batchSize: 500,
  flushEveryMs: 0,
  flushTimeoutMs: 30_000,
  maxRetryDelayMs: 5_000,
  awaitHandlers: true,
  errorRules: Object.freeze([]),
});

/** Longest stored error message, in characters (after masking). */
const MAX_ERROR_LENGTH = 400;
/** Rows of a failed batch tried alone before the store is taken to be down for the whole batch. */
const SINGLE_TRIES = 3;
/** First pause before a store that failed is tried again, in milliseconds (then doubled). */
const RETRY_FIRST_MS = 50;
/** Longest stored request text, in characters (after masking). */
const MAX_REQUEST_LENGTH = 2000;
/** Recorder / node partition pairs warned about, at most (each once). */
const MAX_MISMATCH_WARNINGS = 100;
/** LangGraph's input node: it sees the raw input, before the reducers give messages ids. */
const START_NODE = "__start__";
/** Errors LangGraph throws through tools to steer the graph: control flow, not failures. */
const CONTROL_FLOW_ERRORS = new Set(["GraphInterrupt", "NodeInterrupt", "GraphBubbleUp", "ParentCommand"]);

/** Counters of a handler, since it was made. */
export interface RecordingStats {
  /** Runs (graph invocations) still open. */
  openRuns: number;
  /** Records waiting to be written (not yet handed to the store). */
  buffered: number;
  /** Records in a write the store has not answered yet. */
  inFlight: number;
  /** Records of finished runs waiting for room in a full buffer (back-pressure). */
  waiting: number;
  /** Records written to the ledger. */
  written: { calls: number; turns: number };
  /** Records dropped because the buffer was full (the sum of `droppedBy`). */
  dropped: number;
  /**
   * Dropped records by reason: `slowStore`, a full buffer behind a store slower than the runs
   * (a run waited `maxWaitMs`, or callbacks ran in the background and could not wait);
   * `storeFailed`, a full buffer while the store's writes fail.
   */
  droppedBy: { slowStore: number; storeFailed: number };
  /** Records lost because a record was refused or could not be built (each reported to `onError`). */
  failed: number;
  /** True while the store's writes fail; buffered records are tried again until it answers. */
  storeFailing: boolean;
}

/** What {@link ToolLessonsCallbackHandler.flush} resolves with. */
export interface FlushResult {
  /** Records written while the flush ran. */
  written: number;
  /** Records not written yet when it resolved: buffered, in a write, or waiting for room (kept, tried again). */
  inFlight: number;
  /** Records lost while the flush ran (dropped, or refused). */
  lost: number;
  /** True when it resolved at its timeout rather than with nothing left to write. */
  timedOut: boolean;
}

/** Options of {@link ToolLessonsCallbackHandler.flush}. */
export interface FlushOptions {
  /**
   * Resolve after this many milliseconds even if records are still in flight (a store that
   * hangs); they stay buffered and counted in `inFlight`.
   * @default the handler's flushTimeoutMs (30000)
   */
  timeoutMs?: number;
}

/** Why records were dropped. */
type DropReason = "slow_store" | "store_failed" | "background";
const DROP_COUNTER: Record<DropReason, "slowStore" | "storeFailed"> = {
  slow_store: "slowStore",
  background: "slowStore",
  store_failed: "storeFailed",
};

/** A tool call the model asked for, from its AIMessage. */
interface RequestedCall {
  name: string;
  args: Record<string, unknown>;
  /** The step's tokens divided evenly among the calls it requested. */
  tokens?: number;
  order: number;
}

/** A finished call, kept raw until the run ends (then masked against all of the run's values). */
interface PendingCall {
  tool: string;
  args: Record<string, unknown> | undefined;
  /** The callback's input string, parsed when `args` is not known from the AIMessage. */
  input?: string;
  outcome: "success" | "error";
  error?: ErrorInfo;
  latencyMs?: number;
  tokens?: number;
  /** A successful call's output, bounded, raw until the run ends. */
  output?: CapturedOutput;
  source: "callback" | "tool_message";
  at: number;
  order: number;
}

interface StartedTool {
  root: RootRun;
  tool: string;
  toolCallId?: string;
  input: string;
  startedAt: number;
}

/** Everything known about one top-level run (a graph invocation) until it ends. */
interface RootRun {
  id: string;
  /** Undefined when the caller's ids were refused: nothing of the run is written. */
  partition: string | undefined;
  /** Where `partition` came from; `"none"`: the metadata named no caller (see `settlePartition`). */
  partitionFrom: PartitionSource;
  /** A template's missing id, reported when no node named the thread's caller either. */
  unresolved?: PartitionUnresolved;
  threadId?: string;
  /** Chain root (a graph or chain): gets a turn record when it has a request. */
  isChain: boolean;
  turn?: HumanTurn;
  /** True while `turn` comes from the root's raw input rather than a node's state. */
  turnFromInput: boolean;
  requested: Map<string, RequestedCall>;
  startedCallIds: Set<string>;
  messageCallIds: Set<string>;
  calls: PendingCall[];
  members: Set<string>;
  order: number;
}

/** A finished run, waiting in the buffer (raw until its records are built). */
interface PendingRun {
  kind: "run";
  root: RootRun;
  records: number;
}

/** Built (masked) records a store failed to take, kept for the retry. */
interface PendingRows {
  kind: "rows";
  calls: NewRecord<CallRecord>[];
  turns: NewRecord<TurnRecord>[];
  records: number;
}

type PendingEntry = PendingRun | PendingRows;

/** A finished run waiting for room in a full buffer. */
interface Waiter {
  entry: PendingRun;
  resolve: () => void;
  timer: ReturnType<typeof setTimeout>;
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
 * It never throws into the run: records are kept in memory until their run ends, then buffered
 * and written in batches. The one wait is back-pressure: a run that ends while the buffer is
 * full behind a healthy store waits for room (at most `maxWaitMs`); a failing store never holds
 * a run up. See "Buffering, flushing, back-pressure, faults" in `docs/recording.md`.
 */
export class ToolLessonsCallbackHandler extends BaseCallbackHandler {
  name = "tool_lessons";

  private readonly ledger: Ledger;
  private readonly callers: ThreadCallers;
  private readonly resolver: PartitionSpec | undefined;
  /** Recorder / node partition pairs already warned about (bounded). */
  private readonly mismatches = new Set<string>();
  private readonly onError: (error: unknown, context: RecordingErrorContext) => void;
  private readonly reportError: (error: unknown, context: RecordingErrorContext) => void;
  private readonly maxBuffer: number;
  private readonly maxWaitMs: number;
  private readonly batchSize: number;
  private readonly flushEveryMs: number;
  private readonly flushTimeoutMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly errorRules: readonly ErrorRule[];

  /** Run id → the root run it belongs to (chain and tool runs: the possible parents). */
  private readonly runs = new Map<string, RootRun>();
  private readonly tools = new Map<string, StartedTool>();
  private buffer: PendingEntry[] = [];
  private buffered = 0;
  private inFlight = 0;
  private waiting = 0;
  private readonly waiters: Waiter[] = [];
  private draining: Promise<void> | undefined;
  private drainQueued = false;
  private scheduled = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private retryDelay = RETRY_FIRST_MS;
  private keyPromise: Promise<string> | undefined;
  /** Set while the store's writes fail: the redacted error line, and since when. */
  private storeFault: { message: string; at: number } | undefined;
  private lastWriteError: unknown;
  private lastWriteAt: number | undefined;
  /** Store faults seen, so `flush()` knows when its try failed. */
  private writeFaults = 0;
  /** Drop reasons already reported in this episode. */
  private readonly dropping = new Set<string>();
  private readonly counters = {
    calls: 0,
    turns: 0,
    dropped: 0,
    failed: 0,
    droppedBy: { slowStore: 0, storeFailed: 0 },
  };

  constructor(options: ToolLessonsCallbackHandlerOptions) {
    const awaitHandlers = options.awaitHandlers ?? DEFAULT_RECORDING_OPTIONS.awaitHandlers;
    // Retriever and custom events carry nothing the recorder needs: skip them.
    super({ _awaitHandler: awaitHandlers, ignoreRetriever: true, ignoreCustomEvent: true });
    this.awaitHandlers = awaitHandlers;
    if (!options?.ledger) {
      throw new InvalidInput("ToolLessonsCallbackHandler needs a `ledger` (new Ledger(store)).");
    }
    this.ledger = options.ledger;
    this.callers = options.callers ?? threadCallersOf(options.ledger);
    this.resolver = options.partition;
    const onError = options.onError ?? DEFAULT_RECORDING_OPTIONS.onError;
    this.onError = (error, context) => {
      try {
        onError(error, context);
      } catch {
        // A throwing onError must not reach the run either.
      }
    };
    // A store's or a model's error may quote the record it failed on: only a redacted copy leaves.
    this.reportError = (error, context) => this.onError(redactError(error), context);
    this.maxBuffer = options.maxBuffer ?? DEFAULT_RECORDING_OPTIONS.maxBuffer;
    this.maxWaitMs = options.maxWaitMs ?? DEFAULT_RECORDING_OPTIONS.maxWaitMs;
    this.batchSize = options.batchSize ?? DEFAULT_RECORDING_OPTIONS.batchSize;
    this.flushEveryMs = options.flushEveryMs ?? DEFAULT_RECORDING_OPTIONS.flushEveryMs;
    this.flushTimeoutMs = options.flushTimeoutMs ?? DEFAULT_RECORDING_OPTIONS.flushTimeoutMs;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? DEFAULT_RECORDING_OPTIONS.maxRetryDelayMs;
    this.errorRules = options.errorRules ?? DEFAULT_RECORDING_OPTIONS.errorRules;
    for (const [name, value] of [
      ["maxBuffer", this.maxBuffer],
      ["batchSize", this.batchSize],
    ] as const) {
      if (!Number.isInteger(value) || value < 1) {
        throw new InvalidInput(`${name} must be a positive integer; got ${String(value)}.`);
      }
    }
    for (const [name, value] of [
      ["flushEveryMs", this.flushEveryMs],
      ["maxWaitMs", this.maxWaitMs],
      ["maxRetryDelayMs", this.maxRetryDelayMs],
    ] as const) {
      if (!Number.isFinite(value) || value < 0) {
        throw new InvalidInput(`${name} must be a non-negative number; got ${String(value)}.`);
      }
    }
    if (Number.isNaN(this.flushTimeoutMs) || this.flushTimeoutMs < 0) {
      throw new InvalidInput(`flushTimeoutMs must be a non-negative number; got ${String(this.flushTimeoutMs)}.`);
    }
    this.ledger.registerRecorder(this);
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
   * failures go to `onError`.
   */
  async flush(options: FlushOptions = {}): Promise<FlushResult> {
    const timeoutMs = options.timeoutMs ?? this.flushTimeoutMs;
    const writtenBefore = this.counters.calls + this.counters.turns;
    const lostBefore = this.counters.dropped + this.counters.failed;
    let timedOut = false;
    let deadline: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<"timeout">((resolve) => {
      if (Number.isFinite(timeoutMs)) deadline = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    const within = async (work: Promise<unknown>): Promise<boolean> => {
      if ((await Promise.race([work.then(() => "done" as const), expired])) === "timeout") timedOut = true;
      return !timedOut;
    };
    try {
      if (this.awaitHandlers || (await within(awaitAllCallbacks()))) {
        const faultsBefore = this.writeFaults;
        while (this.buffer.length > 0 || this.draining || this.waiters.length > 0) {
          if (!(await within(this.draining ?? this.startDrain()))) break;
          // The store failed on this try: its records wait for the next one, not for this flush.
          if (this.writeFaults > faultsBefore) break;
          if (!this.draining && this.buffer.length === 0 && this.waiters.length > 0) this.admitWaiters();
        }
      }
    } finally {
      clearTimeout(deadline);
    }
    return {
      written: this.counters.calls + this.counters.turns - writtenBefore,
      inFlight: this.pending(),
      lost: this.counters.dropped + this.counters.failed - lostBefore,
      timedOut,
    };
  }

  /** Counters since the handler was made. */
  stats(): RecordingStats {
    return {
      openRuns: new Set(this.runs.values()).size,
      buffered: this.buffered,
      inFlight: this.inFlight,
      waiting: this.waiting,
      written: { calls: this.counters.calls, turns: this.counters.turns },
      dropped: this.counters.dropped,
      droppedBy: { ...this.counters.droppedBy },
      failed: this.counters.failed,
      storeFailing: this.storeFault !== undefined,
    };
  }

  /** Records dropped because the buffer was full. */
  get dropped(): number {
    return this.counters.dropped;
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
      if (toolCallId !== undefined) root.startedCallIds.add(toolCallId);
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
        failed ? undefined : captureToolOutput(isToolMessage(output) ? output.content : output),
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
    this.counters.failed += 1;
    this.reportError(
      new ToolLessonsError(
        "A tool run ended that the recorder never saw start, so the call was not recorded: LangChain could not " +
          "pass its input to callbacks (an argument that does not serialize to JSON, such as a BigInt). " +
          "Pass JSON-serializable arguments (e.g. a BigInt as a string).",
      ),
      { stage: "event", event, records: 1 },
    );
  }

  // ---------------------------------------------------------------- run tracking

  private openRoot(runId: string, metadata: Record<string, unknown> | undefined, isChain: boolean): RootRun {
    let partition: string | undefined;
    let partitionFrom: PartitionSource = "none";
    let unresolved: PartitionUnresolved | undefined;
    try {
      ({ partition, from: partitionFrom } = resolveCaller(metadata ?? {}, undefined, this.resolver));
    } catch (error) {
      // A template's id may live in configurable / context, which a node sees: settled at the end.
      if (error instanceof PartitionUnresolved) unresolved = error;
      // No partition is guessed: the run goes on, its records are not written (counted in `failed`).
      else this.reportError(error, { stage: "event", event: "partition" });
    }
    return {
      id: runId,
      partition,
      partitionFrom,
      ...(unresolved ? { unresolved } : {}),
      isChain,
      turnFromInput: false,
      requested: new Map(),
      startedCallIds: new Set(),
      messageCallIds: new Set(),
      calls: [],
      members: new Set(),
      order: 0,
    };
  }

  /**
   * Settle a finished run's partition against the one a node or middleware resolved for its
   * thread (`ThreadCallers`; nodes see `configurable` and v1 `context`, callbacks only
   * `metadata`). A run whose metadata named no caller takes the node's partition; a run whose
   * metadata named one keeps it, and a disagreement is reported once per pair with what to change.
   */
  private settlePartition(root: RootRun): void {
    if (root.partitionFrom === "none" && this.callers.isRefused(root.threadId)) {
      // The node refused this caller's ids: no partition is guessed, nothing of the run is written.
      root.partition = undefined;
      this.noticeOnce(
        "refused-caller",
        new ToolLessonsError(
          "A run's records were not written: the route node or middleware refused the caller's ids in its config " +
            "(see its own error), and the run's callback metadata names no caller. Fix the ids passed on invoke; " +
            "nothing is filed under a guessed partition. Warned once.",
          { context: { stage: "partition" } },
        ),
        { stage: "event", event: "partition" },
      );
      return;
    }
    const node = this.callers.partitionOf(root.threadId);
    if (root.partitionFrom === "none" && (root.partition !== undefined || root.unresolved)) {
      if (node !== undefined) root.partition = node;
      else if (root.unresolved) this.reportError(root.unresolved, { stage: "event", event: "partition" });
      return;
    }
    if (node === undefined || root.partition === undefined || node === root.partition) return;
    const pair = `${root.partition}\u0000${node}`;
    if (this.mismatches.has(pair)) return;
    if (this.mismatches.size >= MAX_MISMATCH_WARNINGS) return;
    this.mismatches.add(pair);
    this.reportError(
      new ToolLessonsError(
        `One request, two partitions: the recorder files this thread's calls and turn under "${root.partition}" ` +
          `(from the run's callback metadata) but the route node or middleware resolved "${node}" (from the run's ` +
          "config, which callbacks do not see). Pass every id (tenant_id, user_id, agent_id) in metadata, or give " +
          "the recorder and the node the same partition resolver or template. Warned once for this pair.",
        { context: { stage: "partition" } },
      ),
      { stage: "event", event: "partition" },
    );
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
    if (root.requested.size === 0) return;
    for (const message of toolMessagesIn(outputs)) {
      if (message.status !== "error") continue;
      const id = message.tool_call_id;
      if (typeof id !== "string" || root.startedCallIds.has(id) || root.messageCallIds.has(id)) continue;
      const requested = root.requested.get(id);
      if (!requested) continue;
      root.messageCallIds.add(id);
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
    output?: CapturedOutput,
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
    const records = root.calls.length + (hasTurn ? 1 : 0);
    if (records === 0) return undefined;
    this.settlePartition(root);
    if (root.partition === undefined) {
      this.counters.failed += records;
      return undefined;
    }
    return this.admit({ kind: "run", root, records });
  }

  // ---------------------------------------------------------------- the buffer

  /**
   * Take a finished run into the buffer. When the buffer is full: behind a healthy store (and
   * with `awaitHandlers`), the run's end waits for room, which holds back the caller's `invoke`
   * until the writes catch up (back-pressure), at most `maxWaitMs`; behind a failing store, or
   * with callbacks in LangChain's background queue, the records are dropped and counted.
   */
  private admit(entry: PendingRun): Promise<void> | undefined {
    if (this.ledger.isClosed) {
      this.counters.failed += entry.records;
      this.noticeOnce(
        "closed",
        new RecordingDropped(
          `A run ended after the ledger was closed: its ${entry.records} record(s) were not recorded. ` +
            "Close the ledger after the runs that record into it have ended.",
          { context: { reason: "ledger_closed", records: entry.records } },
        ),
        { stage: "drop", records: entry.records },
      );
      return undefined;
    }
    if (this.waiters.length === 0 && this.hasRoomFor(entry.records)) {
      this.push(entry);
      return undefined;
    }
    if (this.storeFault !== undefined) {
      this.drop(entry.records, "store_failed");
      return undefined;
    }
    if (!this.awaitHandlers) {
      this.drop(entry.records, "background");
      return undefined;
    }
    this.startDrainSoon();
    return new Promise<void>((resolve) => {
      const waiter: Waiter = {
        entry,
        resolve,
        timer: setTimeout(() => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          this.waiting -= entry.records;
          this.drop(entry.records, "slow_store");
          resolve();
        }, this.maxWaitMs),
      };
      this.waiters.push(waiter);
      this.waiting += entry.records;
    });
  }

  private hasRoomFor(records: number): boolean {
    // A run larger than the whole buffer is taken alone, into an empty buffer.
    return this.buffered + this.inFlight + records <= this.maxBuffer || this.buffered + this.inFlight === 0;
  }

  private push(entry: PendingRun): void {
    this.buffer.push(entry);
    this.buffered += entry.records;
    this.dropping.clear();
    // Start fetching the fingerprint key now, so the first write does not wait for it.
    this.keyPromise ??= this.ledger.fingerprintKey();
    this.keyPromise.catch(() => undefined);
    this.schedule();
  }

  /** A batch that could not be written goes back to the front of the buffer, for the retry. */
  private requeue(entries: PendingEntry[]): void {
    this.buffer.unshift(...entries);
    for (const entry of entries) this.buffered += entry.records;
    this.inFlight = 0;
  }

  /** Runs waiting for room, taken in the order they came while there is room (never past the bound). */
  private admitWaiters(): void {
    while (this.waiters.length > 0 && this.hasRoomFor(this.waiters[0].entry.records)) {
      const waiter = this.waiters.shift()!;
      clearTimeout(waiter.timer);
      this.waiting -= waiter.entry.records;
      this.push(waiter.entry);
      waiter.resolve();
    }
  }

  /** Waiting runs give up at once when the store fails: a failing store never holds up a run. */
  private releaseWaiters(reason: DropReason): void {
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      this.waiting -= waiter.entry.records;
      this.drop(waiter.entry.records, reason);
      waiter.resolve();
    }
  }

  private drop(records: number, reason: DropReason): void {
    this.counters.dropped += records;
    this.counters.droppedBy[DROP_COUNTER[reason]] += records;
    const context = { reason, records, maxBuffer: this.maxBuffer, pending: this.pending() };
    this.noticeOnce(reason, new RecordingDropped(this.dropMessage(records, reason), { context }), {
      stage: "drop",
      records,
    });
  }

  /** Why records were dropped, said once per episode (until a run is buffered again). */
  private dropMessage(records: number, reason: DropReason): string {
    const full = `The recording buffer is full (${this.buffered + this.inFlight} of ${this.maxBuffer} records waiting to be written)`;
    switch (reason) {
      case "slow_store": {
        const since =
          this.lastWriteAt === undefined ? "yet" : `for ${Math.round(performance.now() - this.lastWriteAt)} ms`;
        return (
          `${full} and the ledger's store has not finished a write ${since}: a run waited ${this.maxWaitMs} ms for room, ` +
          `then its ${records} record(s) were dropped. The store is slower than the runs (or hangs): ` +
          "check its latency, or raise maxBuffer or maxWaitMs."
        );
      }
      case "store_failed":
        return (
          `${full} while the ledger's store fails (${this.storeFault?.message ?? "a write failed"}): ` +
          `${records} record(s) dropped; buffered records are written when the store answers again. ` +
          "Check that the store is reachable, or raise maxBuffer to ride out longer outages."
        );
      case "background":
        return (
          `${full} and callbacks run in LangChain's background queue (awaitHandlers: false), so a run cannot wait ` +
          `for room: ${records} record(s) dropped. Use awaitHandlers: true for back-pressure, or raise maxBuffer.`
        );
    }
  }

  // ---------------------------------------------------------------- writing

  private schedule(): void {
    if (this.draining || this.retryTimer) return;
    // With no batching delay, or a full batch (or a run waiting for room), the write starts now,
    // on a microtask: a loop busy with runs (timers firing back to back, CPU-bound steps) can
    // delay `setImmediate` by whole seconds. Runs ending while a write is out join the next batch.
    if (this.flushEveryMs === 0 || this.buffered >= this.batchSize || this.waiters.length > 0) {
      return this.startDrainSoon();
    }
    if (this.scheduled) return;
    this.scheduled = true;
    this.timer = setTimeout(() => {
      this.scheduled = false;
      this.timer = undefined;
      void this.startDrain();
    }, this.flushEveryMs);
    this.timer.unref?.();
  }

  private startDrainSoon(): void {
    if (this.draining || this.retryTimer || this.drainQueued) return;
    this.drainQueued = true;
    queueMicrotask(() => {
      this.drainQueued = false;
      void this.startDrain();
    });
  }

  private startDrain(): Promise<void> {
    if (this.draining) return this.draining;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.scheduled = false;
    }
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
    }
    if (this.buffer.length === 0) return Promise.resolve();
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      if (this.storeFault !== undefined) this.scheduleRetry();
      else if (this.buffer.length > 0) this.schedule();
    });
    return this.draining;
  }

  /** Write batches until the buffer is empty or the store fails (then the rest waits for a retry). */
  private async drain(): Promise<void> {
    while (this.buffer.length > 0) {
      const batch = this.takeBatch();
      const ok = await this.writeBatch(batch);
      this.inFlight = 0;
      this.admitWaiters();
      if (!ok) return;
    }
  }

  /** Entries from the front of the buffer, up to `batchSize` records (at least one entry). */
  private takeBatch(): PendingEntry[] {
    const batch: PendingEntry[] = [];
    let records = 0;
    while (this.buffer.length > 0 && (batch.length === 0 || records + this.buffer[0].records <= this.batchSize)) {
      const entry = this.buffer.shift()!;
      batch.push(entry);
      records += entry.records;
    }
    this.buffered -= records;
    this.inFlight = records;
    return batch;
  }

  /** One batch: build the runs' records, append calls, then turns. False when the store failed. */
  private async writeBatch(batch: PendingEntry[]): Promise<boolean> {
    const runs = batch.filter((e): e is PendingRun => e.kind === "run");
    const calls: NewRecord<CallRecord>[] = [];
    const turns: NewRecord<TurnRecord>[] = [];
    for (const e of batch) {
      if (e.kind === "rows") {
        calls.push(...e.calls);
        turns.push(...e.turns);
      }
    }
    if (runs.length > 0) {
      let key: string;
      try {
        this.keyPromise ??= this.ledger.fingerprintKey();
        key = await this.keyPromise;
      } catch (error) {
        this.keyPromise = undefined;
        // The runs stay raw in the buffer (in memory only) until the key can be read.
        this.requeue(batch);
        this.storeFailed(error, this.buffered);
        return false;
      }
      // Shared by this batch only, then dropped: it holds normalised argument values.
      const memo: FingerprintMemo = new Map();
      for (const unit of runs) {
        try {
          const built = buildRecords(unit.root, unit.root.partition!, key, this.errorRules, memo);
          calls.push(...built.calls);
          if (built.turn) turns.push(built.turn);
          this.counters.failed += built.refused;
        } catch (error) {
          this.counters.failed += unit.records;
          this.reportError(error, { stage: "write", records: unit.records });
        }
      }
    }
    const leftCalls = await this.write(calls, (rows) => this.ledger.appendCalls(rows), "calls");
    // Turns after calls: a turn never names calls the ledger does not hold.
    const leftTurns =
      leftCalls.length > 0 ? turns : await this.write(turns, (rows) => this.ledger.appendTurns(rows), "turns");
    if (leftCalls.length === 0 && leftTurns.length === 0) {
      this.storeRecovered();
      return true;
    }
    // Built rows are kept, masked, for the retry; a retry writes the same keys again (no doubles).
    const records = leftCalls.length + leftTurns.length;
    this.requeue([{ kind: "rows", calls: leftCalls, turns: leftTurns, records }]);
    this.storeFailed(this.lastWriteError, records);
    return false;
  }

  /**
   * Append rows in one batch; when the batch fails, row by row, so one bad record (a value the
   * store refuses) is reported and counted alone and the others are written. When the first rows
   * all fail alone too, the store is down: the rows not written are returned, to be retried (the
   * rows tried alone go last, so a bad row at the front cannot block the others).
   */
  private async write<T>(rows: T[], append: (rows: T[]) => Promise<unknown>, counter: "calls" | "turns"): Promise<T[]> {
    if (rows.length === 0) return [];
    try {
      await append(rows);
      this.wrote(counter, rows.length);
      return [];
    } catch (error) {
      if (error instanceof InvalidInput && rows.length === 1) {
        this.counters.failed += 1;
        this.reportError(error, { stage: "write", records: 1 });
        return [];
      }
      this.lastWriteError = error;
      if (rows.length === 1) return rows;
    }
    let failed = 0;
    let written = 0;
    let firstError: unknown;
    const tried: T[] = [];
    for (const [i, row] of rows.entries()) {
      if (written === 0 && tried.length >= SINGLE_TRIES) {
        this.lastWriteError = firstError;
        return [...rows.slice(i), ...tried];
      }
      try {
        await append([row]);
        written += 1;
        this.wrote(counter, 1);
      } catch (error) {
        firstError ??= error;
        if (error instanceof InvalidInput) failed += 1;
        else tried.push(row);
      }
    }
    // Some rows were written: the store is up, and the rows it refused alone are bad records.
    failed += written > 0 ? tried.length : 0;
    if (failed > 0) {
      this.counters.failed += failed;
      this.reportError(firstError, { stage: "write", records: failed });
    }
    if (written === 0 && tried.length > 0) {
      this.lastWriteError = firstError;
      return tried;
    }
    return [];
  }

  private wrote(counter: "calls" | "turns", rows: number): void {
    this.counters[counter] += rows;
    if (rows > 0) this.lastWriteAt = performance.now();
  }

  private storeFailed(error: unknown, records: number): void {
    this.writeFaults += 1;
    const first = this.storeFault === undefined;
    this.storeFault = { message: redactForLog(error), at: performance.now() };
    this.retryDelay = first ? RETRY_FIRST_MS : Math.min(this.retryDelay * 2, this.maxRetryDelayMs);
    if (first) {
      this.reportError(error, { stage: "write", records });
      this.releaseWaiters("store_failed");
    }
  }

  private storeRecovered(): void {
    this.storeFault = undefined;
    this.lastWriteError = undefined;
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.buffer.length === 0) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.startDrain();
    }, this.retryDelay);
    this.retryTimer.unref?.();
  }

  /** Records not yet written nor lost: buffered, in a write, or in a run waiting for room. */
  private pending(): number {
    return this.buffered + this.inFlight + this.waiting;
  }

  /** Our own notice (its text holds counts, never a value): reported once per episode and reason. */
  private noticeOnce(reason: string, error: ToolLessonsError, context: RecordingErrorContext): void {
    if (this.dropping.has(reason)) return;
    this.dropping.add(reason);
    this.onError(error, context);
  }

  private guard(event: string, body: () => Promise<void> | void | undefined): Promise<void> | void {
    try {
      return body() ?? undefined;
    } catch (error) {
      this.reportError(error, { stage: "event", event });
    }
  }
}

// ---------------------------------------------------------------- tool output

/** Longest output summary kept on a call record, in characters (after masking). */
export const MAX_OUTPUT_LENGTH = 400;
/** Of a long output, the characters of the summary taken from its end (the rest from its start). */
const OUTPUT_TAIL_LENGTH = 96;
/** Raw characters held of an output's start, and of its end, until its run ends. */
const RAW_OUTPUT_HEAD = 800;
const RAW_OUTPUT_TAIL = 400;
/** Longest output read as JSON for the `empty` flag (a longer one is not empty). */
const MAX_JSON_CHECK = 4096;

/**
 * A successful call's output as held until its run ends: a bounded slice of the raw text (its
 * start, and its end when long) and the flags read from the whole of it. Raw: never stored; it
 * is masked by {@link maskToolOutput} with every argument value of the run, once they are known.
 */
export interface CapturedOutput {
  /** The output's start (all of it when short). */
  head: string;
  /** The output's end when it is longer than what `head` holds; "" otherwise. */
  tail: string;
  chars: number;
  empty: boolean;
  truncated: boolean;
  zeroCount: boolean;
}

const TRUNCATED = [
  /(?:\.\.\.|…)[\s\])}"']*$/u,
  /\btruncated\b/i,
  /\b(?:and|plus) \d[\d,]* more\b/i,
  /\bshowing (?:the )?(?:first|top) \d+ of \d+\b/i,
];
const ZERO_COUNT = [
  /(?:^|[^\p{L}\p{N}.,])0\s+(?:results?|matches|hits|items?|records?|rows|entries|documents|docs|files|pages|products|orders|options)\b/iu,
  /\b(?:found|returned|total|count|results?|matches|hits)\s*["']?\s*[:=]?\s*0(?!\p{N}|[.,]\p{N})/iu,
];

/**
 * What is held of a tool's output until its run ends: the text of a `ToolMessage`'s content, a
 * string, content blocks or any other value (as JSON), bounded, with its flags. Pure; nothing here
 * is masked yet.
 */
export function captureToolOutput(output: unknown): CapturedOutput {
  const text = outputText(output);
  const long = text.length > RAW_OUTPUT_HEAD + RAW_OUTPUT_TAIL;
  const head = long ? text.slice(0, RAW_OUTPUT_HEAD) : text;
  const tail = long ? text.slice(-RAW_OUTPUT_TAIL) : "";
  const ends = (tail || head).slice(-200);
  return {
    head,
    tail,
    chars: text.length,
    empty: isEmptyOutput(text),
    truncated: TRUNCATED.some((p, i) => (i === 0 ? p.test(ends) : p.test(head) || p.test(tail))),
    zeroCount: ZERO_COUNT.some((p) => p.test(head)),
  };
}

/**
 * The one place a tool's output is made fit for storage: through the gate as a stored text, with
 * the run's masker (every argument value of the run at any depth, the detectors, every remaining
 * digit; as error messages are), whitespace collapsed, clipped to {@link MAX_OUTPUT_LENGTH}
 * characters (the start, and the end of a long output). Text aimed at the model is kept as data
 * and its label recorded in `aimed`, like an error's.
 */
export function maskToolOutput(captured: CapturedOutput, masker: Masker): OutputSummary {
  const gate = (text: string) => gateText(text, { kind: "stored", masker });
  const head = gate(captured.head);
  const tail = captured.tail === "" ? undefined : gate(captured.tail);
  const headText = oneLine(head.text);
  const whole = tail === undefined ? headText : `${headText} ${oneLine(tail.text)}`;
  const text =
    tail === undefined && whole.length <= MAX_OUTPUT_LENGTH
      ? whole
      : `${headText.slice(0, MAX_OUTPUT_LENGTH - OUTPUT_TAIL_LENGTH - 3)} … ${whole.slice(-OUTPUT_TAIL_LENGTH)}`;
  const aimed = head.aimed ?? tail?.aimed;
  return {
    text,
    chars: captured.chars,
    empty: captured.empty,
    truncated: captured.truncated,
    zeroCount: captured.zeroCount,
    ...(aimed !== undefined ? { aimed } : {}),
  };
}

/** The text of a tool's output: a string as is, text content blocks joined, anything else as JSON. */
function outputText(output: unknown): string {
  if (output === undefined || output === null) return "";
  if (typeof output === "string") return output;
  if (Array.isArray(output) && output.length > 0 && output.every((b) => isRecord(b) && typeof b.type === "string")) {
    return output
      .map((b: Record<string, unknown>) =>
        b.type === "text" && typeof b.text === "string" ? b.text : `[${String(b.type)}]`,
      )
      .join("\n");
  }
  try {
    return JSON.stringify(output) ?? String(output);
  } catch {
    return String(output);
  }
}

/** Blank, `null`, `[]`, `{}`, `""`, or an object with lists that are all empty. */
function isEmptyOutput(text: string): boolean {
  const trimmed = text.trim();
  if (trimmed === "") return true;
  if (trimmed.length > MAX_JSON_CHECK || !/^[[{"n]/.test(trimmed)) return false;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return false;
  }
  if (value === null || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  if (!isRecord(value)) return false;
  const values = Object.values(value);
  if (values.length === 0) return true;
  const lists = values.filter(Array.isArray);
  return lists.length > 0 && lists.every((l) => l.length === 0);
}

// ---------------------------------------------------------------- pure helpers

/** Total tokens of a message's `usage_metadata` (total, else input + output). */
function usageTokens(usage: unknown): number | undefined {
  if (!isRecord(usage)) return undefined;
  if (typeof usage.total_tokens === "number") return usage.total_tokens;
  if (typeof usage.input_tokens === "number" || typeof usage.output_tokens === "number") {
    return (Number(usage.input_tokens) || 0) + (Number(usage.output_tokens) || 0);
  }
  return undefined;
}

/** Token usage some providers report only in `llmOutput.tokenUsage`. */
function llmOutputTokens(output: LLMResult): number | undefined {
  const usage = output.llmOutput?.tokenUsage;
  if (!isRecord(usage)) return undefined;
  return typeof usage.totalTokens === "number" ? usage.totalTokens : undefined;
}

interface ToolMessageLike {
  status?: unknown;
  tool_call_id?: unknown;
  name?: unknown;
  content?: unknown;
}

function isToolMessage(value: unknown): value is ToolMessageLike & Record<string, unknown> {
  return isRecord(value) && messageRole(value) === "tool";
}

/** ToolMessages in a chain's outputs: a message, a list, `{ messages }`, or a Command's `update`. */
export function toolMessagesIn(outputs: unknown, depth = 0): ToolMessageLike[] {
  if (depth > 3 || !isRecord(outputs)) return [];
  if (Array.isArray(outputs)) return outputs.flatMap((o) => toolMessagesIn(o, depth + 1));
  if (isToolMessage(outputs)) return [outputs];
  const out: ToolMessageLike[] = [];
  if (Array.isArray(outputs.messages)) out.push(...toolMessagesIn(outputs.messages, depth + 1));
  if (isRecord(outputs.update)) out.push(...toolMessagesIn(outputs.update, depth + 1));
  return out;
}

/** Longest tool name recorded; a longer one is no tool a model was given. */
const MAX_TOOL_NAME_LENGTH = 256;

/** A tool name a store can key a namespace by: non-blank, not too long, storable as it is. */
function isStorableToolName(name: string): boolean {
  return name.trim() !== "" && name.length <= MAX_TOOL_NAME_LENGTH && isStorableName(name);
}

/** Parse a tool's callback input (JSON of its arguments, or a plain string) into arguments. */
function argsFromInput(input: string | undefined): Record<string, unknown> {
  if (input === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(input);
    if (isRecord(parsed) && !Array.isArray(parsed)) return parsed;
    return { input: parsed };
  } catch {
    return { input };
  }
}

/**
 * The records of a finished run: its calls in order, then its turn. Every text is masked
 * against every argument value of the run (known only now, which is why records wait for the
 * run's end). Records that do not match their schema are left out and counted in `refused`.
 */
function buildRecords(
  root: RootRun,
  partition: string,
  key: string,
  rules: readonly ErrorRule[],
  memo: FingerprintMemo,
): { calls: NewRecord<CallRecord>[]; turn?: NewRecord<TurnRecord>; refused: number } {
  const calls = [...root.calls].sort((a, b) => a.order - b.order);
  const argsOf = new Map<PendingCall, Record<string, unknown>>();
  for (const call of calls) argsOf.set(call, call.args ?? argsFromInput(call.input));
  const runValues: unknown[] = [...argsOf.values(), ...[...root.requested.values()].map((r) => r.args)];
  const requestId = root.turn ? (root.turn.id ?? hashedRequestId(root.threadId, root.turn)) : undefined;
  // One masker per run: its request, calls and errors are masked against the same values, one way.
  const masker = createMasker(runValues);
  const request = root.turn ? maskRequest(root.turn.text, { masker, maxLength: MAX_REQUEST_LENGTH }) : undefined;
  // Checked on the request as the user wrote it: masking digits can hide an escaped payload.
  const requestAimed = root.turn ? findAimedAtModel(root.turn.text) : undefined;
  const common = {
    partition,
    runId: root.id,
    ...(root.threadId !== undefined ? { threadId: root.threadId } : {}),
    ...(requestId !== undefined ? { requestId } : {}),
  };
  let refused = 0;
  const out: NewRecord<CallRecord>[] = [];
  const turnCalls: { tool: string; outcome: "success" | "error"; errorClass?: ErrorClass }[] = [];
  for (const call of calls) {
    const args = argsOf.get(call) ?? {};
    const errorClass = call.error ? classifyError(call.error, rules) : undefined;
    // Error text is data: stored masked, and flagged when it speaks to the model (never learned from).
    const error = call.error ? gateText(call.error.message, { kind: "stored", masker }) : undefined;
    const record: NewRecord<CallRecord> = {
      ...common,
      id: timeOrderedId(),
      ...(request !== undefined ? { request } : {}),
      tool: call.tool,
      args: maskArgs(args),
      fingerprints: valueFingerprints(args, key, memo),
      outcome: call.outcome,
      ...(errorClass !== undefined ? { errorClass } : {}),
      ...(error ? { errorMessage: clip(error.text, MAX_ERROR_LENGTH) } : {}),
      ...(error?.aimed !== undefined ? { errorAimed: error.aimed } : {}),
      ...(call.latencyMs !== undefined ? { latencyMs: call.latencyMs } : {}),
      ...(call.tokens !== undefined ? { tokens: call.tokens } : {}),
      ...(call.output ? { output: maskToolOutput(call.output, masker) } : {}),
      source: call.source,
      at: call.at,
    };
    if (isStorableToolName(call.tool) && CallRecordSchema.safeParse({ ...record, v: SCHEMA_VERSION }).success) {
      out.push(record);
      turnCalls.push({ tool: call.tool, outcome: call.outcome, ...(errorClass ? { errorClass } : {}) });
    } else {
      refused += 1;
    }
  }
  if (!root.isChain || requestId === undefined || request === undefined) return { calls: out, refused };
  const servedBy = [...turnCalls].reverse().find((c) => c.outcome === "success")?.tool;
  const turn: NewRecord<TurnRecord> = {
    partition,
    ...(root.threadId !== undefined ? { threadId: root.threadId } : {}),
    requestId,
    request,
    ...(requestAimed !== undefined ? { requestAimed } : {}),
    calls: turnCalls,
    ...(servedBy !== undefined ? { servedBy } : {}),
    id: timeOrderedId(),
  };
  if (!TurnRecordSchema.safeParse({ ...turn, v: SCHEMA_VERSION, at: Date.now() }).success) {
    return { calls: out, refused: refused + 1 };
  }
  return { calls: out, turn, refused };
}
