import type { BaseChatModel, BindToolsInput } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { InvalidInput } from "../errors.js";
import type { FailureSink } from "../failure.js";
import { withDescriptions } from "../prompt/describe.js";
import { type ToolSource } from "../ledger/cards.js";
import type { Ledger } from "../ledger/ledger.js";
import type { ToolCard } from "../ledger/schema.js";
import type { ToolRouter } from "../routing/router.js";
import type { PartitionResolver } from "../caller/partition.js";
import { toolsInUse } from "../caller/request.js";
import { DEFAULT_SERVE } from "../serve/options.js";
import type { KeptTool } from "../serve/tool-set.js";
import { TurnServer } from "../serve/turn-server.js";
import type { Settings } from "../settings.js";

export { toolsInUse };

/** Options of {@link createRouteNode}. */
export interface RouteNodeOptions {
  /** The router. */
  router: ToolRouter;
  /**
   * Where routed turns are recorded (request, offered tools and ranks), so misses and confusions
   * can be found later, and the routed tools' cards are read from. Without it nothing is recorded.
   * @default none
   */
  ledger?: Ledger;
  /**
   * Names the partition from the run's `configurable` / `metadata` (`tenant_id`, `user_id`,
   * `agent_id`), like the recording handler.
   * @default partitionOf(config)
   */
  partition?: PartitionResolver;
  /**
   * How long the node may wait on the store and the index, in total, in milliseconds; past it the
   * turn goes on with every tool (or what was already read).
   * @default DEFAULT_TIME_BOUND_MS (2000)
   */
  timeoutMs?: number;
  /**
   * Where a failure to route, record the route or read the cards goes (stage `"serve"`), once per
   * kind, redacted. Never thrown into the run.
   * @default console.warn with a "[tool-lessons]" prefix
   */
  failureSink?: FailureSink;
  /**
   * Cache-keeping mode: the thread's kept tools (`state.keptTools`) go first in `routedTools`, in
   * their kept order, then what routing adds, so the set only grows. Bind them with
   * `bindKeptTools` and give the graph's `ToolNode` the `search_tools` tool
   * (`createSearchToolsTool`); `docs/nodes.md`.
   * @default false
   */
  cacheKeeping?: boolean;
}

/**
 * A node that routes the newest user turn (served by `src/serve/`): it sets `routedTools` to the
 * top-k tools plus the tools the thread already uses, records what routing offered, and (with a
 * ledger) sets `routedCards` to the cards of those tools that change what the model is shown, in
 * the caller's partition, so the agent node needs no read of its own and every model step of the
 * turn sees the same lessons. Put it before the agent node and bind only the routed tools there
 * ({@link bindRoutedTools}).
 */
export function createRouteNode(options: RouteNodeOptions) {
  const server = new TurnServer({ ...options, register: false, captureEdicts: false });
  const keeping = options.cacheKeeping ?? DEFAULT_SERVE.cacheKeeping;
  return async function route(
    state: { messages: BaseMessage[]; keptTools?: KeptTool[] },
    config?: RunnableConfig,
  ): Promise<{ routedTools: string[]; routedCards: ToolCard[] }> {
    const kept = keeping ? { kept: (state.keptTools ?? []).map((t) => t.name) } : {};
    const served = await server.serve({ messages: state.messages, tools: [], lessons: false, ...kept }, config);
    return { routedTools: served.tools ?? [], routedCards: served.shownCards };
  };
}

/**
 * Bind exactly the routed tools to the model for this turn, each described as its card says
 * (the author's description plus what was learned; see `modelDescription`); pass the state's
 * `routedCards`. With no routing (an empty list), every tool is bound.
 */
export function bindRoutedTools<T extends ToolSource & object>(
  model: BaseChatModel,
  tools: readonly T[],
  routedTools: readonly string[],
  cards: Parameters<typeof withDescriptions>[1] = [],
  settings?: Pick<Settings, "showLearnedExamples">,
) {
  const wanted = new Set(routedTools);
  const chosen = routedTools.length === 0 ? [...tools] : tools.filter((t) => wanted.has(t.name));
  const described = withDescriptions(chosen, cards, settings);
  if (!model.bindTools) {
    throw new InvalidInput(
      `The chat model ${model.getName()} cannot bind tools; use a model that supports tool calling.`,
      {
        context: { model: model.getName() },
      },
    );
  }
  return model.bindTools(described as unknown as BindToolsInput[]);
}
