/**
 * Binding a thread's kept tools in cache-keeping mode (`cacheKeeping`), for the agent node of
 * `createToolLessonsAgent` or of a graph of your own: `search_tools` first, then the thread's
 * `keptTools` in order, each with the description it was first sent with, grown by what
 * `search_tools` found this turn. The grown set is returned for the node to write back to state.
 * In a provider-deferred mode (`deferredLoading`, `src/serve/provider-mode.ts`) every tool is
 * bound deferred instead, and the bound model puts each `search_tools` answer to the provider in
 * its own form.
 */
import type { BaseChatModel, BindToolsInput } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import { type RunnableConfig, RunnableLambda } from "@langchain/core/runnables";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { InvalidInput } from "../errors.js";
import type { ToolCard } from "../ledger/schema.js";
import {
  cacheModeOf,
  type DeferredLoading,
  deferredBinding,
  providerMessages,
  withSearchCalls,
} from "../serve/provider-mode.js";
import { SEARCH_TOOLS_DESCRIPTION } from "../serve/search-tools.js";
import { describerOf, type KeptTool, keptBinding, keptForCall } from "../serve/tool-set.js";
import type { ToolLessonsState } from "./state.js";

/** The state {@link bindKeptTools} reads (the lessons fields the lessons node wrote). */
export type KeptToolsState = Pick<ToolLessonsState, "messages"> & {
  routedTools?: string[];
  routedCards?: ToolCard[];
  keptTools?: KeptTool[];
};

/**
 * The model bound with the thread's kept tools (see the module comment), and `keptTools` to write
 * back when it grew (`undefined` when unchanged). `search` is the `search_tools` tool
 * (`createSearchToolsTool`); give it to the graph's `ToolNode` too. `deferredLoading` is serving's
 * option of that name (`"auto"` picks from `model`); the bound model then takes the thread's
 * messages as they are and answers with the `search_tools` calls the agent's tool node runs.
 * @param deferredLoading @default "append"
 */
export function bindKeptTools(
  model: BaseChatModel,
  tools: readonly StructuredToolInterface[],
  state: KeptToolsState,
  search: StructuredToolInterface,
  deferredLoading: DeferredLoading = "append",
) {
  if (!model.bindTools) {
    throw new InvalidInput(
      `The chat model ${model.getName()} cannot bind tools; use a model that supports tool calling.`,
      { context: { model: model.getName() } },
    );
  }
  const known = new Set(tools.map((t) => t.name));
  const kept = state.keptTools ?? [];
  const mode = cacheModeOf(model, deferredLoading);
  if (mode !== "append") {
    const call = deferredBinding(mode, [search, ...tools], kept, state.routedCards ?? [], SEARCH_TOOLS_DESCRIPTION);
    const deferred = model.bindTools(call.tools as BindToolsInput[]);
    const bound = RunnableLambda.from(async (messages: BaseMessage[], config?: RunnableConfig) =>
      withSearchCalls(mode, await deferred.invoke(providerMessages(mode, messages, call.deferred), config)),
    );
    return { bound, keptTools: call.kept === kept ? undefined : [...call.kept] };
  }
  // A turn the lessons node did not route (no user turn yet): every tool joins, as routing skipped would.
  const turnTools = state.routedTools && state.routedTools.length > 0 ? state.routedTools : [...known];
  const grown = keptForCall(kept, turnTools, describerOf(tools, state.routedCards ?? []), state.messages, known);
  const bound = model.bindTools(keptBinding(grown, tools, [search]) as unknown as BindToolsInput[]);
  return { bound, keptTools: grown === kept ? undefined : [...grown] };
}
