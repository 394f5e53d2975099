import type { BaseChatModel, BindToolsInput } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { InvalidInput } from "../errors.js";
import { withDescriptions } from "../prompt/describe.js";
import { type ToolSource } from "../ledger/cards.js";
import type { Ledger } from "../ledger/ledger.js";
import type { ToolCard } from "../ledger/schema.js";
import type { ToolRouter } from "../routing/router.js";
import { threadCallersOf } from "../record/callers.js";
import { type PartitionResolver, partitionOf } from "../record/partition.js";
import { latestHumanTurn, requestIdFor, toolsInUse } from "../record/request.js";

export { toolsInUse };
import type { Settings } from "../settings.js";
import { redactError } from "../text/gate.js";
import type { ToolLessonsState } from "./state.js";

/** Options of {@link createRouteNode}. */
export interface RouteNodeOptions {
  /** The router. */
  router: ToolRouter;
  /**
   * Where routed turns are recorded (request, offered tools and ranks), so misses and confusions
   * can be found later. Without it nothing is recorded.
   */
  ledger?: Ledger;
  /**
   * Names the partition from the run's `configurable` / `metadata` (`tenant_id`, `user_id`,
   * `agent_id`), like the recording handler.
   * @default resolvePartition(metadata, configurable)
   */
  partition?: PartitionResolver;
  /**
   * Where a failure to record the route or read the cards goes. Never thrown into the run.
   * @default console.warn with a "[tool-lessons]" prefix
   */
  onError?: (error: unknown) => void;
}

/**
 * The defaults applied to every optional {@link RouteNodeOptions} field left unset (`ledger` and
 * `partition` have no value of their own: without a ledger nothing is recorded, without a
 * resolver the built-in one reads `configurable` and `metadata`).
 */
export const DEFAULT_ROUTE_NODE: Readonly<Required<Pick<RouteNodeOptions, "onError">>> = Object.freeze({
  onError: (error: unknown) =>
    console.warn("[tool-lessons] recording a routed turn or reading its cards failed:", error),
});

/**
 * A node that routes the newest user turn: it sets `routedTools` to the top-k tools plus the
 * tools the thread already uses, records what routing offered, and (with a ledger) sets
 * `routedCards` to those tools' cards in the caller's partition, so the agent node needs no read
 * of its own and every model step of the turn sees the same lessons. Put it before the agent
 * node and bind only the routed tools there ({@link bindRoutedTools}).
 */
export function createRouteNode(options: RouteNodeOptions) {
  const report = options.onError ?? DEFAULT_ROUTE_NODE.onError;
  // A store's error may quote the row it failed on: only a redacted copy leaves.
  const onError = (error: unknown): void => report(redactError(error));
  return async function route(
    state: { messages: BaseMessage[] },
    config?: RunnableConfig,
  ): Promise<{ routedTools: string[]; routedCards: ToolCard[] }> {
    const turn = latestHumanTurn(state.messages);
    if (!turn) return { routedTools: [], routedCards: [] };
    const configurable = (config?.configurable ?? {}) as Record<string, unknown>;
    const threadId = typeof configurable.thread_id === "string" ? configurable.thread_id : undefined;
    let partition: string;
    try {
      partition = partitionOf(config, options.partition);
      if (options.ledger) threadCallersOf(options.ledger).remember(threadId, partition);
    } catch (error) {
      // A caller whose ids are refused gets every tool and nothing recorded: no partition is guessed.
      if (options.ledger) threadCallersOf(options.ledger).refuse(threadId);
      onError(error);
      return { routedTools: [], routedCards: [] };
    }
    const routed = await options.router.route(turn.text, { partition, sticky: toolsInUse(state.messages) }, config);
    if (options.ledger) {
      const requestId = requestIdFor(threadId, state.messages);
      try {
        await options.ledger.appendRoutes([
          {
            partition,
            threadId,
            requestId: requestId ?? "",
            offered: routed.offered,
            allSent: routed.allSent,
            ...(routed.skipped ? { skipped: routed.skipped.reason } : {}),
            k: options.router.k,
          },
        ]);
      } catch (error) {
        onError(error);
      }
    }
    return {
      routedTools: routed.tools,
      routedCards: await routedCards(options.ledger, partition, routed.tools, onError),
    };
  };
}

/** The cards of `tools` in the partition; none (the authors' descriptions) when reading fails. */
async function routedCards(
  ledger: Ledger | undefined,
  partition: string,
  tools: readonly string[],
  onError: (error: unknown) => void,
): Promise<ToolCard[]> {
  if (!ledger) return [];
  try {
    return await ledger.getCards(partition, tools);
  } catch (error) {
    onError(error);
    return [];
  }
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
