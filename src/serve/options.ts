/**
 * The options of serving a turn, shared by every adapter over it (the lessons graph's inject
 * node, the route node, the `createAgent` middleware): one name per concept, langchain's where it
 * has one (`maxTools`, `alwaysInclude`, as `llmToolSelectorMiddleware`).
 */
import type { Ledger } from "../ledger/ledger.js";
import { DEFAULT_TIME_BOUND_MS, type FailureSink } from "../failure.js";
import type { PartitionResolver } from "../caller/partition.js";
import type { ToolRouter } from "../routing/router.js";
import type { ToolIndex } from "../routing/tool-index.js";
import { DEFAULT_SETTINGS } from "../settings.js";
import type { DeferredLoading } from "./provider-mode.js";

/** Options of serving a turn ({@link TurnServer}). */
export interface ServeOptions {
  /**
   * The ledger: cards, rules, memory and route records. Without one, a ledger over the run's
   * store (the graph's `compile({ store })`, `createAgent({ store })`) is used; with neither the
   * turn gets every tool and no lessons, and the sink hears it once.
   * @default a Ledger over the run's store
   */
  ledger?: Ledger;
  /**
   * The routing index, used when its ledger writes to the store the turn uses.
   * @default a ToolIndex over the ledger in use (lexical embeddings, in memory), one per ledger
   */
  index?: ToolIndex;
  /**
   * The router (its index should be over the ledger the turn uses).
   * @default a ToolRouter over the index, with `maxTools` and `alwaysInclude`, one per ledger
   */
  router?: ToolRouter;
  /**
   * Most tools routing offers per request; the always-included tools and the tools the thread
   * already uses come on top.
   * @default the router's k (DEFAULT_SETTINGS.routingK, 5)
   */
  maxTools?: number;
  /**
   * Tools offered on every request, routed or not; they do not count against `maxTools`.
   * @default []
   */
  alwaysInclude?: readonly string[];
  /**
   * Names the caller's partition; see `partitionOf` (metadata, then configurable, then context).
   * @default the built-in resolver
   */
  partition?: PartitionResolver;
  /**
   * Register the agent's tools (one card each) in a caller's partition the first time this
   * process sees it (again when the tool set changes), so routing has the tools to choose from.
   * Unchanged tools write nothing.
   * @default true
   */
  register?: boolean;
  /**
   * Capture the user's edicts ("never email Sarah") from each new request as critical rules of
   * the caller's partition before the model is called. Off where the lessons graph's nodes
   * capture them.
   * @default true
   */
  captureEdicts?: boolean;
  /**
   * Most tokens of the system block (estimated); parts are cut in the documented order beyond it.
   * @default 1500
   */
  maxTokens?: number;
  /**
   * How long serving a turn may wait on the store, the index and the embeddings, in total, in
   * milliseconds. Past it the turn goes on with what was already read (every tool, no block at
   * worst) and `failureSink` hears it once. `Infinity` waits as long as they take.
   * @default DEFAULT_TIME_BOUND_MS (2000)
   */
  timeoutMs?: number;
  /**
   * Cache-keeping tool search: the tools bound for a thread only grow (the first turn's routed
   * set, then each tool routed later or found by the `search_tools` tool the model is given,
   * appended), each sent as it was described when first added, so the prompt's cached prefix
   * survives from one model call to the next. The system block then holds the binding rules and
   * guidelines of the thread's tools, without the per-request retrieved rules. Off: the tools are
   * narrowed to each request's routed set. See docs/middleware.md.
   * @default false
   */
  cacheKeeping?: boolean;
  /**
   * How cache-keeping mode keeps the provider's prompt cache. `"auto"` picks from the agent's
   * model: provider-deferred with `ChatAnthropic` (`"anthropic"`: every tool sent with
   * `defer_loading`, `search_tools` answered with `tool_reference` blocks) or with `ChatOpenAI` on
   * the Responses API (`"openai"`: the client-executed `tool_search`, answered with a
   * `tool_search_output`); with any other model `"append"` (found tools appended to the tools
   * array). Set it to force one. Read by `createAgent`'s middleware; the agent node of
   * `createToolLessonsAgent` keeps the append mode. See docs/middleware.md.
   * @default "auto"
   */
  deferredLoading?: DeferredLoading;
  /**
   * Most tools one `search_tools` answer names (cache-keeping mode).
   * @default 3
   */
  searchResults?: number;
  /**
   * Where a degraded turn is reported (stage `"serve"`): once per kind of failure, redacted.
   * Never thrown into the run.
   * @default console.warn with a "[tool-lessons]" prefix
   */
  failureSink?: FailureSink;
}

/** The defaults of {@link ServeOptions} applied with `??` (the others have none of their own). */
export const DEFAULT_SERVE = Object.freeze({
  maxTools: DEFAULT_SETTINGS.routingK,
  alwaysInclude: Object.freeze([]) as readonly string[],
  register: true,
  captureEdicts: true,
  maxTokens: 1500,
  timeoutMs: DEFAULT_TIME_BOUND_MS,
  cacheKeeping: false,
  deferredLoading: "auto" as DeferredLoading,
  searchResults: 3,
});
