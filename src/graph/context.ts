/**
 * What the four lessons nodes share: their options, and per run the ledger (the graph's own store
 * when it has one, else the one given), the routing index and router over it, the caller's
 * partition, and a once-per-kind report of what went wrong.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseStore } from "@langchain/langgraph";
import { ToolRouter } from "../routing/router.js";
import { ToolIndex } from "../routing/tool-index.js";
import type { ToolSource } from "../ledger/cards.js";
import type { Ledger } from "../ledger/ledger.js";
import { ledgerOn } from "../ledger/on-store.js";
import { rankByCoverage } from "../learn/coverage.js";
import { DeterministicProposer } from "../learn/deterministic-proposer.js";
import { ModelProposer } from "../learn/model-proposer.js";
import type { Proposer } from "../learn/proposer.js";
import { registerTools } from "../learn/register.js";
import { threadCallersOf } from "../record/callers.js";
import { type PartitionResolver, partitionOf } from "../record/partition.js";
import { LessonRetriever } from "../rules/retriever.js";
import { DEFAULT_SETTINGS } from "../settings.js";
import { redactError } from "../text/gate.js";

/** Options of the lessons nodes and of {@link createLessonsGraph}. */
export interface LessonsGraphOptions {
  /** The agent's tools (names and descriptions: edicts are scoped to them, routing falls back to them). */
  tools: readonly ToolSource[];
  /**
   * The ledger, used when the graph has no store of its own (`compile({ store })`); with one, a
   * `Ledger` over `config.store` is used instead.
   * @default none: without a store and a ledger, the nodes route nothing and learn nothing
   */
  ledger?: Ledger;
  /**
   * The routing index, used when its ledger writes to the store the nodes use.
   * @default a ToolIndex over the ledger in use (lexical embeddings, in memory), one per ledger
   */
  index?: ToolIndex;
  /**
   * The router, when its index is the one the nodes use.
   * @default a ToolRouter over the index with `k` and `alwaysOffer`
   */
  router?: ToolRouter;
  /**
   * Tools routed per turn (on top: the tools the thread already uses, and `alwaysOffer`).
   * @default DEFAULT_SETTINGS.routingK (5)
   */
  k?: number;
  /**
   * Tools offered on every turn.
   * @default []
   */
  alwaysOffer?: readonly string[];
  /**
   * A chat model that proposes lessons (structured output, vetted like the rest).
   * @default none: the deterministic proposer
   */
  model?: BaseChatModel;
  /**
   * Who proposes lessons when no `model` is given.
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
   * Tool calls of a thread after which its tools' memory is evaluated and guidelines written.
   * @default 10
   */
  memoryEvery?: number;
  /**
   * Most tokens of the injected block (estimated); parts are cut in the documented order beyond it.
   * @default 1500
   */
  maxTokens?: number;
  /**
   * Normal-priority rules retrieved per turn.
   * @default 3
   */
  retrieveRules?: number;
  /**
   * Register `tools` in each partition the nodes meet that has no card for them.
   * @default true
   */
  register?: boolean;
  /**
   * Names the caller's partition; see `partitionOf` (metadata, then configurable, then context).
   * @default the built-in resolver
   */
  partition?: PartitionResolver;
  /**
   * Something to flush before the nodes read a thread's records (the recorder of the run).
   * @default none
   */
  recorder?: { flush(options?: { timeoutMs?: number }): Promise<unknown> };
  /**
   * Where a failure goes (ledger, routing, learning): once per kind of failure per graph, redacted.
   * Never thrown into the run.
   * @default console.warn with a "[tool-lessons]" prefix
   */
  onError?: (message: string, error: unknown) => void;
}

/** The defaults of {@link LessonsGraphOptions} applied with `??`. */
export const DEFAULT_LESSONS_GRAPH = Object.freeze({
  k: DEFAULT_SETTINGS.routingK,
  alwaysOffer: Object.freeze([]) as readonly string[],
  autoApply: false,
  memoryEvery: 10,
  maxTokens: 1500,
  retrieveRules: 3,
  register: true,
  onError: (message: string, error: unknown): void => console.warn(`[tool-lessons] ${message}`, error),
});

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
  private readonly indexes = new WeakMap<Ledger, ToolIndex>();
  private readonly routers = new WeakMap<ToolIndex, ToolRouter>();
  private readonly retrievers = new WeakMap<Ledger, LessonRetriever>();
  private readonly registered = new WeakMap<Ledger, Set<string>>();
  private readonly reported = new Set<string>();

  constructor(options: LessonsGraphOptions) {
    this.options = options;
    this.proposer = options.model
      ? new ModelProposer(options.model)
      : (options.proposer ?? new DeterministicProposer({ rankExamples: rankByCoverage }));
  }

  /** The ledger, partition and thread of a run; the partition is remembered for the recorder. */
  context(config: RunnableConfig | undefined): RunContext {
    const store = (config as { store?: BaseStore } | undefined)?.store;
    const ledger = store ? ledgerOn(store) : this.options.ledger;
    const configurable = config?.configurable as Record<string, unknown> | undefined;
    const threadId = typeof configurable?.thread_id === "string" ? configurable.thread_id : undefined;
    let partition: string;
    try {
      partition = partitionOf(config as Parameters<typeof partitionOf>[0], this.options.partition);
    } catch (error) {
      if (ledger) threadCallersOf(ledger).refuse(threadId);
      throw error;
    }
    if (ledger) threadCallersOf(ledger).remember(threadId, partition);
    return { ledger, partition, threadId };
  }

  index(ledger: Ledger): ToolIndex {
    if (this.options.index && this.options.index.ledger.store === ledger.store) return this.options.index;
    let index = this.indexes.get(ledger);
    if (!index) {
      index = new ToolIndex({ ledger });
      this.indexes.set(ledger, index);
    }
    return index;
  }

  router(ledger: Ledger): ToolRouter {
    const index = this.index(ledger);
    if (this.options.router && this.options.router.index === index) return this.options.router;
    let router = this.routers.get(index);
    if (!router) {
      router = new ToolRouter({
        index,
        k: this.options.k ?? DEFAULT_LESSONS_GRAPH.k,
        alwaysOffer: this.options.alwaysOffer ?? DEFAULT_LESSONS_GRAPH.alwaysOffer,
        // The router's own warnings (routing skipped, another partition's tools) go where the nodes' go.
        onWarning: (message, warning) => this.report(`router:${warning.kind}:${warning.partition}`, message, undefined),
      });
      this.routers.set(index, router);
    }
    return router;
  }

  retriever(ledger: Ledger): LessonRetriever {
    let retriever = this.retrievers.get(ledger);
    if (!retriever) {
      retriever = new LessonRetriever({ ledger, k: this.options.retrieveRules ?? DEFAULT_LESSONS_GRAPH.retrieveRules });
      this.retrievers.set(ledger, retriever);
    }
    return retriever;
  }

  /** Register the tools in a partition once per process (cards that exist are kept as they are). */
  async ensureRegistered(ledger: Ledger, partition: string): Promise<void> {
    if (!(this.options.register ?? DEFAULT_LESSONS_GRAPH.register)) return;
    let seen = this.registered.get(ledger);
    if (!seen) {
      seen = new Set();
      this.registered.set(ledger, seen);
    }
    if (seen.has(partition)) return;
    const names = this.options.tools.map((t) => t.name);
    const cards = await ledger.getCards(partition, names);
    if (cards.length < names.length) {
      await registerTools(ledger, [...this.options.tools], { partition });
      await this.index(ledger).reindex(partition);
    }
    seen.add(partition);
  }

  /** Report a failure once per kind; only a redacted copy of the error leaves. */
  report(kind: string, message: string, error: unknown): void {
    if (this.reported.has(kind)) return;
    this.reported.add(kind);
    (this.options.onError ?? DEFAULT_LESSONS_GRAPH.onError)(message, redactError(error));
  }
}
