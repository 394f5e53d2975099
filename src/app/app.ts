/**
 * The app object: one per process (or per agent family), made with {@link createToolLessons}.
 * It owns exactly one of each piece, so nothing meets through a registry:
 *
 * - the ledger (over `store`, or one per run's store when none is given), and through it the
 *   thread callers, the queued route records and the in-process append feed;
 * - the turn server, which holds the routing index, the router and the rule retriever per ledger;
 * - the recorder, the evidence tally, the proposer, the manager;
 * - one failure sink, which every piece reports to (each under its own stage).
 *
 * The ready agent (`createToolLessonsAgent`), the lessons nodes, the middleware, `search_tools`,
 * the manager and the CLI are views over it: they translate their input and output and call it.
 * The store stays the one truth across processes: what the app keeps in memory is a cache another
 * process's writes invalidate through the partition versions (`ledger/versions.ts`).
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BaseStore } from "@langchain/langgraph";
import { resolveThreadCaller } from "../caller/thread-callers.js";
import { InvalidInput } from "../errors.js";
import { DEFAULT_FAILURE_SINK, FailureReporter, type FailureSink, withinBound } from "../failure.js";
import type { ToolSource } from "../ledger/cards.js";
import { Ledger } from "../ledger/ledger.js";
import { unwrapStore } from "../ledger/on-store.js";
import { rankByCoverage } from "../learn/coverage.js";
import { DeterministicProposer } from "../learn/deterministic-proposer.js";
import { LessonManager } from "../learn/manager.js";
import { ModelProposer } from "../learn/model-proposer.js";
import type { Proposer } from "../learn/proposer.js";
import { EvidenceTally } from "../learn/review/tally.js";
import { ToolLessonsCallbackHandler } from "../record/handler.js";
import type { ToolRouter } from "../routing/router.js";
import type { ToolIndex } from "../routing/tool-index.js";
import { DEFAULT_SERVE } from "../serve/options.js";
import { createSearchToolsTool } from "../serve/search-tools.js";
import { TurnServer } from "../serve/turn-server.js";
import { checkOptions, DEFAULT_TOOL_LESSONS, PROPOSER_TIME_BOUND_MS, type ToolLessonsOptions } from "./options.js";

/** What one node needs for one run. */
export interface RunContext {
  ledger: Ledger | undefined;
  partition: string;
  threadId: string | undefined;
}

/** The app object: see the module comment. Made with {@link createToolLessons}. */
export class ToolLessons {
  /** The options it was made with (checked; defaults are {@link DEFAULT_TOOL_LESSONS}). */
  readonly options: Readonly<ToolLessonsOptions>;
  /** The one failure sink every piece of the app reports to. */
  readonly failureSink: FailureSink;
  /** Serves each turn; holds the routing index, router, retriever and registrations per ledger. */
  readonly server: TurnServer;
  /** Who proposes lessons. */
  readonly proposer: Proposer;
  /** A partition's evidence since each tool's last review, fed by the ledger's appends. */
  readonly tally: EvidenceTally;
  /** The time bound of each store, index or model call (`timeoutMs`). */
  readonly timeoutMs: number;
  /** Hears the learning nodes' failures (stage `"learn"`), once per kind. */
  readonly reporter: FailureReporter;
  private readonly fixedLedger: Ledger | undefined;
  private readonly runLedgers = new WeakMap<BaseStore, Ledger>();
  private readonly fed = new WeakSet<Ledger>();
  private ownRecorder: ToolLessonsCallbackHandler | undefined;
  private ownManager: LessonManager | undefined;

  /** @throws InvalidInput for options that are not valid (see `checkOptions`) */
  constructor(options: ToolLessonsOptions = {}) {
    checkOptions(options);
    this.failureSink = options.failureSink ?? DEFAULT_FAILURE_SINK;
    this.fixedLedger =
      options.ledger ??
      (options.store ? new Ledger(unwrapStore(options.store), { failureSink: this.failureSink }) : undefined);
    this.options = Object.freeze({ ...options, ...(this.fixedLedger ? { ledger: this.fixedLedger } : {}) });
    this.proposer = options.proposerModel
      ? new ModelProposer(options.proposerModel)
      : (options.proposer ?? new DeterministicProposer({ rankExamples: rankByCoverage }));
    this.server = new TurnServer(this.options, (store) => this.ledgerFor(store));
    this.timeoutMs = options.timeoutMs ?? DEFAULT_SERVE.timeoutMs;
    this.reporter = new FailureReporter("learn", this.failureSink);
    this.tally = new EvidenceTally({ tools: this.tools.map((t) => t.name) });
  }

  /** The agent's tools (`options.tools`). */
  get tools(): readonly ToolSource[] {
    return this.options.tools ?? DEFAULT_TOOL_LESSONS.tools;
  }

  /**
   * The app's ledger: the one given, or the one over `store`.
   * @throws InvalidInput when the app was made with neither (it then uses each run's store)
   */
  get ledger(): Ledger {
    if (!this.fixedLedger) {
      throw new InvalidInput("This app has no ledger of its own: make it with { store } or { ledger }.");
    }
    return this.fixedLedger;
  }

  /**
   * The ledger a run writes through: the app's own, else one per run's store (`config.store`),
   * made once and kept by the app. Its evidence feeds the app's tally from its first use.
   */
  ledgerFor(store: BaseStore | undefined): Ledger | undefined {
    let ledger = this.fixedLedger;
    if (!ledger && store) {
      const unwrapped = unwrapStore(store);
      ledger = this.runLedgers.get(unwrapped);
      if (!ledger) {
        ledger = new Ledger(unwrapped, { failureSink: this.failureSink });
        this.runLedgers.set(unwrapped, ledger);
      }
    }
    if (ledger && !this.fed.has(ledger)) {
      this.fed.add(ledger);
      ledger.onAppended((appended) => {
        if (appended.kind === "turns") for (const t of appended.rows) this.tally.turn(t);
        else for (const r of appended.rows) this.tally.route(r);
      });
    }
    return ledger;
  }

  /**
   * The recorder over the app's ledger, made once (pass it as a run's callback; the ready agent
   * wires it itself). Call `await app.recorder.flush()` before the process exits.
   * @throws InvalidInput when the app has no ledger of its own
   */
  get recorder(): ToolLessonsCallbackHandler {
    this.ownRecorder ??= new ToolLessonsCallbackHandler({
      ledger: this.ledger,
      failureSink: this.failureSink,
      ...(this.options.partition ? { partition: this.options.partition } : {}),
      ...(this.options.singleTenant ? { singleTenant: true } : {}),
    });
    return this.ownRecorder;
  }

  /**
   * What the learn step flushes before it reads a thread's records: the `recorder` option, else
   * the app's own recorder once made.
   */
  get recorderToFlush(): { flush(options?: { timeoutMs?: number }): Promise<unknown> } | undefined {
    return this.options.recorder ?? this.ownRecorder;
  }

  /** The routing index serving uses over a ledger (the app's own by default). */
  index(ledger: Ledger = this.ledger): ToolIndex {
    return this.server.backends.index(ledger);
  }

  /** The router serving uses over a ledger (the app's own by default). */
  router(ledger: Ledger = this.ledger): ToolRouter {
    // A router is made for any ledger; only a run with no ledger at all has none.
    return this.server.backends.router(ledger) as ToolRouter;
  }

  /**
   * The operator's manager over the app's ledger and its routing index (so an apply or undo moves
   * this process's routing at once; other processes follow the store's versions), reporting to
   * the app's sink. Made once.
   */
  manager(): LessonManager {
    this.ownManager ??= new LessonManager({
      ledger: this.ledger,
      index: this.index(),
      proposer: this.proposer,
      failureSink: this.failureSink,
    });
    return this.ownManager;
  }

  /**
   * The `search_tools` tool of cache-keeping mode over the app's serving, for `tools` (default:
   * the app's tools; none: each request's).
   */
  searchTools(tools: readonly ToolSource[] | undefined = this.options.tools): StructuredToolInterface {
    return createSearchToolsTool(this.server, tools) as unknown as StructuredToolInterface;
  }

  /**
   * Warm what a caller's first turn would otherwise pay for (see `TurnServer.setup`): the tools
   * registered in the partition `config` names (as a run's config would), its routing index
   * built, its versions and lessons read. Call it once at start-up per partition; it throws when
   * the store or index cannot be reached.
   */
  setup(config?: RunnableConfig, tools: readonly ToolSource[] = this.tools) {
    return this.server.setup({ tools, ...(this.options.store ? { store: this.options.store } : {}) }, config);
  }

  /** The ledger, partition and thread of a run; the partition is remembered for the recorder. */
  context(config: RunnableConfig | undefined): RunContext {
    const ledger = this.ledgerFor((config as { store?: BaseStore } | undefined)?.store);
    const configurable = config?.configurable as Record<string, unknown> | undefined;
    const threadId = typeof configurable?.thread_id === "string" ? configurable.thread_id : undefined;
    const partition = resolveThreadCaller(
      config as Parameters<typeof resolveThreadCaller>[0],
      this.options.partition,
      threadId,
      ledger?.callers,
    );
    return { ledger, partition, threadId };
  }

  /** {@link ToolLessons.context}, or `undefined` when the caller's ids are refused (serving reports it). */
  tryContext(config: RunnableConfig | undefined): RunContext | undefined {
    try {
      return this.context(config);
    } catch {
      return undefined;
    }
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

/**
 * The app a view (the ready agent, the middleware, the lessons nodes) is over: the one given,
 * else one made from the view's options. A view given an app takes no app options of its own.
 * @throws InvalidInput when app options are given beside `app`
 */
export function appForView(view: string, given: ToolLessons | undefined, options: ToolLessonsOptions): ToolLessons {
  if (!given) return createToolLessons(options);
  const extra = Object.keys(options).filter((k) => (options as Record<string, unknown>)[k] !== undefined);
  if (extra.length > 0) {
    throw new InvalidInput(
      `${view} was given an app and app options (${extra.join(", ")}): pass them to createToolLessons.`,
      {
        context: { options: extra.join(",") },
      },
    );
  }
  return given;
}

/**
 * Make the app object: one ledger, one turn server (index, router, retriever), one recorder, one
 * tally, one manager and one failure sink, which the adapters are views over.
 *
 * ```ts
 * const app = createToolLessons({ store, tools, failureSink });
 * await app.setup({ configurable: { user_id: "ann" } });
 * const agent = createToolLessonsAgent({ app, model });      // or: toolLessonsMiddleware({ app })
 * await app.manager().review("u:ann");
 * ```
 * @throws InvalidInput for options that are not valid
 */
export function createToolLessons(options: ToolLessonsOptions = {}): ToolLessons {
  return new ToolLessons(options);
}
