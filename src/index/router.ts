import type { CallbackManagerForRetrieverRun } from "@langchain/core/callbacks/manager";
import { Document } from "@langchain/core/documents";
import { BaseRetriever, type BaseRetrieverInput } from "@langchain/core/retrievers";
import type { RunnableConfig } from "@langchain/core/runnables";
import { DEFAULT_PARTITION } from "../ledger/keys.js";
import type { Offer } from "../ledger/schema.js";
import { DEFAULT_SETTINGS } from "../settings.js";
import type { ToolIndex } from "./tool-index.js";

/** Options of {@link ToolRouter}. */
export interface ToolRouterOptions extends BaseRetrieverInput {
  /** The routing index. */
  index: ToolIndex;
  /**
   * Partition used by `invoke` (the `BaseRetriever` path). {@link ToolRouter.route} takes one per call.
   * @default "default"
   */
  partition?: string;
  /**
   * Tools offered per request.
   * @default DEFAULT_SETTINGS.routingK (5)
   */
  k?: number;
  /**
   * Offer no tool scoring below this: the "no tool" path, where the model answers by itself.
   * Scores are cosine similarities.
   * @default undefined (always offer k tools)
   */
  minScore?: number;
  /**
   * Tools offered on every request, on top of the routed ones (e.g. a help or escalation tool).
   * @default []
   */
  alwaysOffer?: readonly string[];
}

/**
 * The defaults applied to every optional {@link ToolRouterOptions} field left unset (`minScore` has
 * no value of its own: without it, k tools are always offered). `k` is the settings' `routingK`,
 * whose default lives in src/settings.ts only.
 */
export const DEFAULT_TOOL_ROUTER: Readonly<Required<Pick<ToolRouterOptions, "partition" | "k" | "alwaysOffer">>> =
  Object.freeze({
    partition: DEFAULT_PARTITION,
    k: DEFAULT_SETTINGS.routingK,
    alwaysOffer: Object.freeze([]),
  });

/** What routing chose for one request. */
export interface RoutedTools {
  /** Routed tools, best first, with rank and score: what routing offered (and what is recorded). */
  offered: Offer[];
  /** Tools offered on every request. */
  always: string[];
  /** Tools the thread already uses, kept visible (not counted as offered). */
  sticky: string[];
  /** Every tool to bind this turn: offered, then always, then sticky, without repeats. */
  tools: string[];
  /** True when every registered tool was sent (no routing choice was made). */
  allSent: boolean;
}

/** Per-call routing options. */
export interface RouteOptions {
  /** @default the router's partition */
  partition?: string;
  /** Tools the thread already uses: kept visible, not counted as offered. */
  sticky?: readonly string[];
  /** @default the router's k */
  k?: number;
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
  readonly partition: string;
  readonly k: number;
  readonly minScore: number | undefined;
  readonly alwaysOffer: readonly string[];

  constructor(options: ToolRouterOptions) {
    super(options);
    this.index = options.index;
    this.partition = options.partition ?? DEFAULT_TOOL_ROUTER.partition;
    this.k = options.k ?? DEFAULT_TOOL_ROUTER.k;
    this.minScore = options.minScore;
    this.alwaysOffer = options.alwaysOffer ?? DEFAULT_TOOL_ROUTER.alwaysOffer;
  }

  /** Route one request: the offered tools plus the always-on and sticky ones. */
  async route(request: string, options: RouteOptions = {}, _config?: RunnableConfig): Promise<RoutedTools> {
    const partition = options.partition ?? this.partition;
    const k = options.k ?? this.k;
    const always = [...new Set(this.alwaysOffer)];
    const offered = await this.index.route(partition, request, {
      k,
      minScore: this.minScore,
      exclude: new Set(always),
    });
    // After route(): the index has loaded the partition.
    const choosable = this.index.indexedTools(partition).filter((t) => !always.includes(t));
    const allSent = choosable.length <= k && this.minScore === undefined;
    const sticky = [...new Set(options.sticky ?? [])].filter(
      (t) => !offered.some((o) => o.tool === t) && !always.includes(t),
    );
    const tools = [...offered.map((o) => o.tool), ...always, ...sticky];
    return { offered, always, sticky, tools, allSent };
  }

  override async _getRelevantDocuments(
    query: string,
    _runManager?: CallbackManagerForRetrieverRun,
  ): Promise<Document[]> {
    const routed = await this.route(query);
    return routed.offered.map(
      (o) => new Document({ pageContent: o.tool, metadata: { tool: o.tool, rank: o.rank, score: o.score } }),
    );
  }
}
