import {
  type CallbackManagerForRetrieverRun,
  CallbackManager,
  type Callbacks,
  parseCallbackConfigArg,
} from "@langchain/core/callbacks/manager";
import { Document, type DocumentInterface } from "@langchain/core/documents";
import { BaseRetriever, type BaseRetrieverInput } from "@langchain/core/retrievers";
import { ensureConfig, type RunnableConfig } from "@langchain/core/runnables";
import { DEFAULT_PARTITION } from "../ledger/keys.js";
import type { Offer } from "../ledger/schema.js";
import { type CallerSources, partitionOf, type PartitionSpec, toResolver } from "../caller/partition.js";
import { DEFAULT_FAILURE_SINK, FailureReporter, type FailureSink } from "../failure.js";
import { DEFAULT_SETTINGS } from "../settings.js";
import { redactForLog } from "../text/gate.js";
import type { RoutingVector } from "./card-vectors.js";
import type { ToolIndex } from "./tool-index.js";

/** Options of {@link ToolRouter}. */
export interface ToolRouterOptions extends BaseRetrieverInput {
  /** The routing index. */
  index: ToolIndex;
  /**
   * How `invoke(request, config)` (the `BaseRetriever` path) names the caller's partition: a
   * resolver, or a namespace template such as `"t:{tenant_id}/u:{user_id}"`; a string with no
   * `{placeholder}` is one fixed partition (and the default of {@link ToolRouter.route}).
   * Unset, the ids of the config are read as everywhere (`metadata`, `configurable`, v1
   * `context`; see `docs/partitions.md`), and a config without ids routes `"default"`.
   * @default undefined (the config's ids)
   */
  partition?: PartitionSpec;
  /**
   * Tools offered per request (routing's k).
   * @default DEFAULT_SETTINGS.routingK (5)
   */
  maxTools?: number;
  /**
   * Offer no tool scoring below this: the "no tool" path, where the model answers by itself.
   * Scores are cosine similarities.
   * @default undefined (always offer maxTools tools)
   */
  minScore?: number;
  /**
   * Tools offered on every request, on top of the routed ones (e.g. a help or escalation tool).
   * @default []
   */
  alwaysInclude?: readonly string[];
  /**
   * Where a request is routed when its partition has no tools of its own (no cards registered
   * there): the tools registered in this partition, with a warning once per partition. `null`:
   * no fallback; routing is skipped (`skipped: { reason: "no_tools" }`) and every tool is sent.
   * @default "default"
   */
  fallbackPartition?: string | null;
  /**
   * Receives what routing had to work around (stage `"serve"`, kinds {@link RoutingFailureKind}),
   * once per router for a failure and once per partition for one without tools; the message is
   * redacted (never an error's raw text), and the context is a {@link RoutingFailureContext}.
   * Never throws into the run: a sink that throws is ignored.
   * @default DEFAULT_FAILURE_SINK (console.warn with a "[tool-lessons]" prefix)
   */
  failureSink?: FailureSink;
}

/**
 * The `kind` of a routing failure: `routing_skipped`, routing failed or found no tools and every
 * tool was sent; `routing_fallback`, another partition's tools were routed.
 */
export type RoutingFailureKind = "routing_skipped" | "routing_fallback";

/** The `context` of a routing failure: partition names and a reason, never request text. */
export interface RoutingFailureContext {
  /** The caller's partition. */
  partition: string;
  /** Why routing was skipped (for `routing_skipped`). */
  reason?: RoutingSkipped["reason"];
  /** The failed error's class name (for a `routing_skipped` failure, when it had one). */
  errorName?: string;
  /** The partition whose tools were routed (for `routing_fallback`). */
  routedFrom?: string;
}

/**
 * Why a turn was not routed (every tool was sent instead). A kind, never an error's text.
 * - `embeddings_failed`: embedding the request failed (or indexing the partition's tools on their
 *   first use, which embeds them and reads their cards);
 * - `index_failed`: the vector search failed;
 * - `no_tools`: neither the caller's partition nor the fallback partition has a tool.
 */
export interface RoutingSkipped {
  reason: "embeddings_failed" | "index_failed" | "no_tools";
  /** The failed error's class name (e.g. `"StoreUnavailable"`), for a failure. */
  errorName?: string;
}

/**
 * The defaults applied to every optional {@link ToolRouterOptions} field left unset (`minScore` has
 * no value of its own: without it, maxTools tools are always offered). `maxTools` is the
 * settings' `routingK`, whose default lives in src/settings.ts only.
 */
export const DEFAULT_TOOL_ROUTER: Readonly<
  Required<Pick<ToolRouterOptions, "maxTools" | "alwaysInclude" | "fallbackPartition" | "failureSink">> & {
    partition: string;
  }
> = Object.freeze({
  partition: DEFAULT_PARTITION,
  maxTools: DEFAULT_SETTINGS.routingK,
  alwaysInclude: Object.freeze([]),
  fallbackPartition: DEFAULT_PARTITION,
  failureSink: DEFAULT_FAILURE_SINK,
});

/** What routing chose for one request. */
export interface RoutedTools {
  /** Routed tools, best first, with rank and score: what routing offered (and what is recorded). */
  offered: Offer[];
  /** Tools offered on every request. */
  always: string[];
  /** Tools the thread already uses, kept visible (not counted as offered). */
  sticky: string[];
  /**
   * Every tool to bind this turn: offered, then always, then sticky, without repeats. Empty
   * when routing was skipped: bind every tool (`bindRoutedTools` does for an empty list).
   */
  tools: string[];
  /** True when every registered tool was sent (no routing choice was made). */
  allSent: boolean;
  /** Set when routing was skipped this turn (it failed, or found no tools): every tool is sent. */
  skipped?: RoutingSkipped;
  /** Set when the caller's partition had no tools and this partition's were routed instead. */
  routedFrom?: string;
}

/** Per-call routing options. */
export interface RouteOptions {
  /** @default the router's fixed partition (`"default"` unless `partition` is a fixed string) */
  partition?: string;
  /** Tools the thread already uses: kept visible, not counted as offered. */
  sticky?: readonly string[];
  /** @default the router's maxTools */
  maxTools?: number;
}

/**
 * Tool routing as a LangChain retriever: a request in, the top-k tools out. Through `invoke` it
 * returns one `Document` per offered tool (`metadata: { tool, rank, score }`), so callbacks and
 * tracing work as for any retriever; {@link ToolRouter.route} returns the full choice.
 */
export class ToolRouter extends BaseRetriever {
  static override lc_name(): string {
    return "ToolRouter";
  }

  override lc_namespace = ["tool_lessons", "routing"];

  readonly index: ToolIndex;
  /** The partition {@link ToolRouter.route} routes when given none. */
  readonly partition: string;
  /** Tools offered per request ({@link ToolRouterOptions.maxTools}). */
  readonly maxTools: number;
  readonly minScore: number | undefined;
  /** Tools offered on every request ({@link ToolRouterOptions.alwaysInclude}). */
  readonly alwaysInclude: readonly string[];
  readonly fallbackPartition: string | null;
  private readonly spec: PartitionSpec | undefined;
  private readonly failures: FailureReporter;

  constructor(options: ToolRouterOptions) {
    super(options);
    this.index = options.index;
    // A template is checked now, not at the first request.
    toResolver(options.partition);
    const fixed = typeof options.partition === "string" && !options.partition.includes("{");
    this.spec = options.partition;
    this.partition = fixed ? (options.partition as string) : DEFAULT_TOOL_ROUTER.partition;
    this.maxTools = options.maxTools ?? DEFAULT_TOOL_ROUTER.maxTools;
    this.minScore = options.minScore;
    this.alwaysInclude = options.alwaysInclude ?? DEFAULT_TOOL_ROUTER.alwaysInclude;
    this.fallbackPartition =
      options.fallbackPartition === undefined ? DEFAULT_TOOL_ROUTER.fallbackPartition : options.fallbackPartition;
    this.failures = new FailureReporter("serve", options.failureSink ?? DEFAULT_TOOL_ROUTER.failureSink);
  }

  /** The partition `invoke` routes for a run's config: the router's spec, or the config's ids. */
  partitionFor(config?: RunnableConfig & CallerSources): string {
    if (typeof this.spec === "string" && !this.spec.includes("{")) return this.spec;
    return partitionOf(config, this.spec);
  }

  /**
   * Route one request: the offered tools plus the always-on and sticky ones. Never throws for
   * a failing index or embeddings: the turn then gets every tool (`tools: []`, `allSent: true`)
   * and `skipped` says why; a partition with no tools routes `fallbackPartition`'s. With
   * `config`, the routing is a retriever run of its callbacks (see {@link ToolRouter.invoke}).
   */
  async route(request: string, options: RouteOptions = {}, config?: RunnableConfig): Promise<RoutedTools> {
    return this.routeRun(request, options, config);
  }

  /**
   * {@link ToolRouter.route} as a retriever run of `config`'s callbacks (a tracer sees the request
   * and one document per offered tool with its rank and score); without a callback handler that
   * listens to retriever runs (none, or only ones with `ignoreRetriever`, as the recorder), no run.
   */
  private async routeRun(
    request: string,
    options: RouteOptions,
    config: RunnableConfig | undefined,
    run?: { runId?: string; runName?: string },
  ): Promise<RoutedTools> {
    const manager =
      !hasHandlers(config?.callbacks) && !hasHandlers(this.callbacks)
        ? undefined
        : await CallbackManager.configure(
            config?.callbacks,
            this.callbacks,
            config?.tags,
            this.tags,
            config?.metadata,
            this.metadata,
            { verbose: this.verbose },
          );
    const runManager = await manager?.handleRetrieverStart(
      this.toJSON(),
      request,
      run?.runId,
      undefined,
      undefined,
      undefined,
      run?.runName,
    );
    try {
      const routed = await this.choose(request, options);
      await runManager?.handleRetrieverEnd(documentsOf(routed));
      return routed;
    } catch (error) {
      await runManager?.handleRetrieverError(error);
      throw error;
    }
  }

  private async choose(request: string, options: RouteOptions): Promise<RoutedTools> {
    const partition = options.partition ?? this.partition;
    const k = options.maxTools ?? this.maxTools;
    const always = [...new Set(this.alwaysInclude)];
    const sticky = [...new Set(options.sticky ?? [])].filter((t) => !always.includes(t));
    let routedIn = partition;
    let vector: RoutingVector;
    try {
      vector = await this.index.embedQuery(partition, request);
      if (this.index.toolCount(partition) === 0) {
        const fallback = this.fallbackPartition;
        if (fallback === null || fallback === partition)
          return this.skip(partition, { reason: "no_tools" }, always, sticky);
        vector = await this.index.embedQuery(fallback, request);
        if (this.index.toolCount(fallback) === 0) {
          return this.skip(partition, { reason: "no_tools" }, always, sticky);
        }
        routedIn = fallback;
        // Once per partition.
        this.warn(
          "routing_fallback",
          `partition "${partition}" has no tools of its own: routed the tools of "${fallback}". ` +
            `Register the tools there (registerTools(ledger, tools, { partition })), or set fallbackPartition.`,
          { partition, routedFrom: fallback },
          partition,
        );
      }
    } catch (error) {
      return this.skip(partition, { reason: "embeddings_failed", errorName: nameOf(error) }, always, sticky);
    }
    let offered: Offer[];
    try {
      offered = await this.index.routeVector(routedIn, vector, {
        k,
        minScore: this.minScore,
        exclude: new Set(always),
      });
    } catch (error) {
      return this.skip(partition, { reason: "index_failed", errorName: nameOf(error) }, always, sticky);
    }
    // Counted, not listed: nothing here grows with the partition's tools.
    const choosable = this.index.toolCount(routedIn) - always.filter((t) => this.index.hasTool(routedIn, t)).length;
    const allSent = choosable <= k && this.minScore === undefined;
    const kept = sticky.filter((t) => !offered.some((o) => o.tool === t));
    const tools = [...offered.map((o) => o.tool), ...always, ...kept];
    return {
      offered,
      always,
      sticky: kept,
      tools,
      allSent,
      ...(routedIn !== partition ? { routedFrom: routedIn } : {}),
    };
  }

  /** Every tool sent, with why; warned once per router for a failure, once per partition for no tools. */
  private skip(partition: string, skipped: RoutingSkipped, always: string[], sticky: string[]): RoutedTools {
    const message =
      skipped.reason === "no_tools"
        ? `partition "${partition}" has no tools to route (nor has the fallback partition): every tool is sent. ` +
          "Register the tools in that partition (registerTools(ledger, tools, { partition }))."
        : `routing failed (${skipped.reason.replace("_", " ")}${skipped.errorName ? `, ${skipped.errorName}` : ""}): ` +
          "the turn goes on with every tool and its route record says routing was skipped. Warned once per router.";
    const context: RoutingFailureContext = {
      partition,
      reason: skipped.reason,
      ...(skipped.errorName ? { errorName: skipped.errorName } : {}),
    };
    // A partition with no tools, once per partition; a failing index, once per router.
    this.warn("routing_skipped", message, context, skipped.reason === "no_tools" ? `none:${partition}` : undefined);
    return { offered: [], always, sticky, tools: [], allSent: true, skipped };
  }

  /** To the sink once per kind and `scope` (the package's one dedup policy, `FailureReporter`), redacted. */
  private warn(kind: RoutingFailureKind, message: string, context: RoutingFailureContext, scope?: string): void {
    this.failures.report(kind, redactForLog(message), undefined, { ...context }, scope);
  }

  /**
   * The tools routed for `request` in the caller's partition, read from `config` as every piece
   * reads it (see {@link ToolRouter.partitionFor}); callbacks and tracing as for any retriever.
   * @throws InvalidInput when the config's ids are not ids (no partition is guessed).
   */
  override async invoke(input: string, options?: RunnableConfig & CallerSources): Promise<DocumentInterface[]> {
    const config = ensureConfig(parseCallbackConfigArg(options));
    const partition = this.partitionFor({ ...config, ...(options?.context ? { context: options.context } : {}) });
    return documentsOf(await this.routeRun(input, { partition }, config, config));
  }

  override async _getRelevantDocuments(
    query: string,
    _runManager?: CallbackManagerForRetrieverRun,
  ): Promise<Document[]> {
    return documentsOf(await this.choose(query, { partition: this.partition }));
  }
}

/** Whether callbacks hold a handler (a run with none is not worth starting). */
function hasHandlers(callbacks: Callbacks | undefined): boolean {
  if (callbacks === undefined) return false;
  const handlers = Array.isArray(callbacks) ? callbacks : callbacks.handlers;
  // A handler that ignores retriever runs (the recorder does) would hear nothing: no run is made for it.
  return handlers.some((h) => !(h as { ignoreRetriever?: boolean }).ignoreRetriever);
}

/** One document per offered tool: `pageContent` the tool's name, `metadata: { tool, rank, score }`. */
function documentsOf(routed: RoutedTools): Document[] {
  return routed.offered.map(
    (o) => new Document({ pageContent: o.tool, metadata: { tool: o.tool, rank: o.rank, score: o.score } }),
  );
}

/** An error's class name when it looks like one (a name is code's, but a message is data: never kept). */
function nameOf(error: unknown): string | undefined {
  const name = error instanceof Error ? error.name : undefined;
  return typeof name === "string" && /^[A-Za-z][A-Za-z0-9_]{0,59}$/.test(name) ? name : undefined;
}
