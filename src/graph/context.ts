/**
 * What the four lessons nodes share: their options, the turn server that serves each turn
 * (`src/serve/`), the proposer, and a once-per-kind report of what went wrong while learning.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseStore } from "@langchain/langgraph";
import { DEFAULT_FAILURE_SINK, FailureReporter, withinBound } from "../failure.js";
import type { ToolSource } from "../ledger/cards.js";
import type { Ledger } from "../ledger/ledger.js";
import { rankByCoverage } from "../learn/coverage.js";
import { DeterministicProposer } from "../learn/deterministic-proposer.js";
import { ModelProposer } from "../learn/model-proposer.js";
import { DEFAULT_EFFECT_CHECK } from "../learn/review/effect.js";
import type { Proposer } from "../learn/proposer.js";
import { resolveThreadCaller, threadCallersOf } from "../caller/thread-callers.js";
import type { ToolIndex } from "../routing/tool-index.js";
import { DEFAULT_SERVE, type ServeOptions } from "../serve/options.js";
import { TurnServer } from "../serve/turn-server.js";

/** Options of the lessons nodes and of {@link createLessonsGraph}. */
export interface LessonsGraphOptions extends Omit<ServeOptions, "captureEdicts"> {
  /** The agent's tools (names and descriptions: edicts are scoped to them, routing falls back to them). */
  tools: readonly ToolSource[];
  /**
   * A chat model that proposes lessons (structured output, vetted like the rest).
   * @default none: the deterministic proposer
   */
  proposerModel?: BaseChatModel;
  /**
   * Who proposes lessons when no `proposerModel` is given.
   * @default a DeterministicProposer choosing examples by routing coverage
   */
  proposer?: Proposer;
  /**
   * Apply the vetted revisions at once (approved by `tool-lessons:auto`). Off: they wait for an
   * operator (`tool-lessons review` / `apply`). Edicts are stored at once either way.
   * @default false
   */
  autoApply?: boolean;
  /**
   * Undo an applied revision whose measured effect is nil or negative, the reason recorded on it
   * (`undoneBecause`; `closedBy` "tool-lessons"). Off: it is only flagged for the operator
   * (`tool-lessons effects`, `history`, `review`, the report). The graph measures applied
   * revisions only when its learn step runs anyway, or when a revised tool has had enough new
   * calls, misses and confusions since its last check (counted in process, no read); the same
   * option as `LessonManager.effects({ undoFlagged })`.
   * @default false
   */
  undoFlagged?: boolean;
  /**
   * Tool calls of a thread after which its tools' memory is evaluated and guidelines written.
   * @default 10
   */
  memoryEvery?: number;
  /**
   * Something to flush before the nodes read a thread's records (the recorder of the run); it is
   * given the nodes' `timeoutMs`.
   * @default none
   */
  recorder?: { flush(options?: { timeoutMs?: number }): Promise<unknown> };
}

/** The defaults of {@link LessonsGraphOptions} applied with `??` (serving's are `DEFAULT_SERVE`). */
export const DEFAULT_LESSONS_GRAPH = Object.freeze({
  ...DEFAULT_SERVE,
  autoApply: false,
  undoFlagged: DEFAULT_EFFECT_CHECK.undoFlagged,
  memoryEvery: 10,
});

/**
 * What a learning node may take on top of `timeoutMs` when its proposer calls a model (the
 * proposer's model call is on the run's path too, and takes seconds).
 */
export const PROPOSER_TIME_BOUND_MS = 30_000;

/** What one node needs for one run. */
export interface RunContext {
  ledger: Ledger | undefined;
  partition: string;
  threadId: string | undefined;
}

/** The nodes' shared machinery, made once per lessons graph. */
export class LessonsRuntime {
  readonly options: LessonsGraphOptions;
  readonly proposer: Proposer;
  /** Serves each turn (inject); holds the per-ledger index, router, retriever and registrations. */
  readonly server: TurnServer;
  /** The time bound of each store, index or model call the nodes make (`timeoutMs`). */
  readonly timeoutMs: number;
  /** Hears the learning nodes' failures (stage `"learn"`), once per kind. */
  readonly reporter: FailureReporter;

  constructor(options: LessonsGraphOptions) {
    this.options = options;
    this.proposer = options.proposerModel
      ? new ModelProposer(options.proposerModel)
      : (options.proposer ?? new DeterministicProposer({ rankExamples: rankByCoverage }));
    // The graph's classify and vet capture edicts; serving does not capture them a second time.
    this.server = new TurnServer({ ...options, captureEdicts: false });
    this.timeoutMs = options.timeoutMs ?? DEFAULT_SERVE.timeoutMs;
    this.reporter = new FailureReporter("learn", options.failureSink ?? DEFAULT_FAILURE_SINK);
  }

  /** The ledger, partition and thread of a run; the partition is remembered for the recorder. */
  context(config: RunnableConfig | undefined): RunContext {
    const ledger = this.server.backends.ledger((config as { store?: BaseStore } | undefined)?.store);
    const configurable = config?.configurable as Record<string, unknown> | undefined;
    const threadId = typeof configurable?.thread_id === "string" ? configurable.thread_id : undefined;
    const partition = resolveThreadCaller(
      config as Parameters<typeof resolveThreadCaller>[0],
      this.options.partition,
      threadId,
      ledger && threadCallersOf(ledger),
    );
    return { ledger, partition, threadId };
  }

  /** {@link LessonsRuntime.context}, or `undefined` when the caller's ids are refused (serving reports it). */
  tryContext(config: RunnableConfig | undefined): RunContext | undefined {
    try {
      return this.context(config);
    } catch {
      return undefined;
    }
  }

  /** The routing index over a ledger (the one serving routes with). */
  index(ledger: Ledger): ToolIndex {
    return this.server.backends.index(ledger);
  }

  /** Report a learning failure once per kind; only a redacted copy of the error leaves. */
  report(kind: string, message: string, error: unknown): void {
    this.reporter.report(kind, message, error);
  }

  /**
   * A learning node held to the time bound (`timeoutMs`, plus {@link PROPOSER_TIME_BOUND_MS}
   * when the proposer calls a model): past it (a store that never answers) the turn goes on
   * without what the node would have added, and the sink hears it once. The node's own work is
   * left to settle in the background.
   */
  bounded<S, U extends object>(
    kind: string,
    node: (state: S, config?: RunnableConfig) => Promise<U>,
  ): (state: S, config?: RunnableConfig) => Promise<U | Record<string, never>> {
    const bound = this.proposer.callsModel === false ? this.timeoutMs : this.timeoutMs + PROPOSER_TIME_BOUND_MS;
    return async (state, config) => {
      try {
        return await withinBound(() => node(state, config), bound, { stage: "learn", kind });
      } catch (error) {
        this.report(kind, `${kind} did not finish within the time bound; the turn goes on without it.`, error);
        return {};
      }
    };
  }
}
