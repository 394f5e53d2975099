/** What serving a turn takes and gives ({@link TurnServer.serve}). */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseStore } from "@langchain/langgraph";
import type { ToolSource } from "../ledger/cards.js";
import type { Guideline, ToolCard } from "../ledger/schema.js";
import type { LessonsBlock, BlockRule } from "../prompt/lessons-block.js";
import type { CallerSources } from "../caller/partition.js";
import type { RoutedTools } from "../routing/router.js";
import type { Rule } from "../rules/model.js";

/** One turn's request, as an adapter hands it over. */
export interface ServeInput {
  /** The thread's messages; the newest human message is the request. */
  messages: readonly BaseMessage[];
  /**
   * The agent's tools: registered in the caller's partition, and the only ones a turn is given.
   * Empty: whatever the router's index holds (nothing is registered).
   */
  tools: readonly ToolSource[];
  /**
   * The caller's partition, when the adapter already resolved it for this run with the same
   * `partition` option (`resolveThreadCaller`): serving does not resolve it a second time.
   * @default resolved from the run's config
   */
  partition?: string;
  /**
   * Cache-keeping mode: the names of the tools the thread already holds, in their kept order. The
   * tools sent are these, then the routed ones not among them; the block is rendered for all of
   * them and carries no per-request retrieved rules, so it changes only when a lesson does.
   * @default none: the routed tools only
   */
  kept?: readonly string[];
  /** The run's store (a graph's `config.store`, `createAgent`'s runtime store), when there is one. */
  store?: BaseStore;
  /**
   * Read the rules, guidelines and settings and render the block (`false`: cards only, for an
   * adapter that shows no block).
   * @default true
   */
  lessons?: boolean;
  /**
   * Capture the request's edicts as rules (`false` for an adapter whose own stage captures them,
   * as the lessons graph's classify and vet do).
   * @default the server's `captureEdicts` option (true)
   */
  captureEdicts?: boolean;
}

/** The run's config as serving reads it: `configurable`, `metadata`, v1 `context`, callbacks. */
export type ServeConfig = RunnableConfig & CallerSources;

/**
 * How a turn was served: `served` (routed, or every tool when routing was skipped); `no_turn`
 * (no user message: nothing to do); `no_ledger` (no ledger and no store: every tool, no
 * lessons); `refused` (the caller's ids were refused: every tool, nothing recorded).
 */
export type ServeStatus = "served" | "no_turn" | "no_ledger" | "refused";

/** What a turn needs, decided once per request. */
export interface ServedTurn {
  status: ServeStatus;
  /** The caller's partition (undefined unless served). */
  partition: string | undefined;
  /** The thread (`configurable.thread_id`). */
  threadId: string | undefined;
  /** The request's id (undefined without a user message). */
  requestId: string | undefined;
  /** What routing chose (offered with ranks and scores, always, sticky); undefined when it was skipped. */
  routing: RoutedTools | undefined;
  /** The tools to send, in routed order; undefined when routing was skipped or not possible: every tool. */
  tools: string[] | undefined;
  /** The cards of the tools sent, in the caller's partition (none when the ledger failed). */
  cards: ToolCard[];
  /** Those cards cut to what the model is shown, only the ones that change it (`shownCards`). */
  shownCards: ToolCard[];
  /** The rules binding the caller for the tools sent. */
  rules: Rule[];
  /** The guidelines of the tools sent (`null`: none). */
  guidelines: { tool: string; guideline: Guideline | null }[];
  /** Normal-priority rules retrieved for the request, of the tools sent or unscoped. */
  retrieved: BlockRule[];
  /** The system block: pinned rules, retrieved rules, guidelines, within the budget. */
  block: LessonsBlock;
  /**
   * The steps that failed, ran past the bound or were skipped for it (`register`, `edicts`,
   * `routing`, `route_record`, `ledger_read`, `retrieval`; or the status when not served): the
   * turn went on without them. Empty on a turn served whole.
   */
  failed: string[];
}
