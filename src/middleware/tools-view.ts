/**
 * What the model is shown of the tools on one `createAgent` model call: the routed tools, each
 * described as its card says. Pure.
 *
 * `createAgent` (langchain v1) checks every `wrapModelCall` result against the tools it registered:
 * a middleware may leave a registered tool out (narrowing), but a tool object with a registered
 * name that is not the registered instance is refused ("You have modified a tool ..."), and an
 * `Object.create` view counts as another instance. A plain definition (`{ name, description,
 * schema }`, what every chat model's `bindTools` accepts) is no runnable, so it is not checked: the
 * model is bound with it, and when the model calls that name the agent's own tool node runs the
 * registered instance. So a tool whose shown description differs from its own is sent as a plain
 * definition carrying the new description and the tool's own schema; every other tool is sent as
 * the registered instance itself. Provider-deferred cache keeping sends every tool as such a
 * definition, marked deferred ({@link deferredCall}).
 */
import type { BaseMessage } from "@langchain/core/messages";
import { modelDescription } from "../prompt/describe.js";
import type { ToolCard } from "../ledger/schema.js";
import { type CacheMode, deferredBinding, providerMessages } from "../serve/provider-mode.js";
import { SEARCH_TOOLS_DESCRIPTION } from "../serve/search-tools.js";
import type { KeptTool } from "../serve/tool-set.js";
import { DEFAULT_SETTINGS, type Settings } from "../settings.js";

/** A tool as a `createAgent` model request carries it: a registered tool, or a provider's dict. */
export type RequestTool = object;

/** A tool definition the model is bound with in place of a registered instance. */
export interface DescribedToolDefinition {
  name: string;
  description: string;
  /** The registered tool's own schema (zod or JSON schema), unchanged. */
  schema: unknown;
}

/** The name of a tool the agent runs itself (a registered tool or a plain definition), if it has one. */
export function requestToolName(tool: RequestTool): string | undefined {
  const name = (tool as { name?: unknown }).name;
  const description = (tool as { description?: unknown }).description;
  return typeof name === "string" && description !== undefined ? name : undefined;
}

/**
 * The tools of one model call: with `routed`, the named tools in the request's own order plus
 * every tool without a name (a provider's built-in tools, kept as they are), the rest left out;
 * without it (routing was skipped), all of them. A tool whose card changes what the model is
 * shown is replaced by a {@link DescribedToolDefinition}. Pure: the same inputs, the same list.
 */
export function toolsForModel<T extends RequestTool>(
  tools: readonly T[],
  routed: readonly string[] | undefined,
  cards: readonly ToolCard[],
  settings: Pick<Settings, "showLearnedExamples"> = DEFAULT_SETTINGS,
): (T | DescribedToolDefinition)[] {
  const wanted = routed === undefined ? undefined : new Set(routed);
  const byName = new Map(cards.map((c) => [c.name, c]));
  const out: (T | DescribedToolDefinition)[] = [];
  for (const tool of tools) {
    const name = requestToolName(tool);
    if (name === undefined) {
      out.push(tool);
      continue;
    }
    if (wanted !== undefined && !wanted.has(name)) continue;
    const card = byName.get(name);
    const own = (tool as { description?: unknown }).description;
    const current = typeof own === "string" ? own : "";
    const shown = card
      ? modelDescription({ ...card, author: { ...card.author, description: current } }, settings)
      : current;
    out.push(shown === current ? tool : { name, description: shown, schema: (tool as { schema?: unknown }).schema });
  }
  return out;
}

/**
 * The tools and messages of one provider-deferred model call (`deferredLoading`, see
 * `src/serve/provider-mode.ts`): the tools as `deferredBinding` sends them (`search_tools` first,
 * every agent tool deferred and frozen for the thread, then a provider's own tools), and the
 * messages with each `search_tools` answer in the provider's form. `kept` is returned itself when
 * nothing was added. Pure.
 */
export function deferredCall(
  mode: Exclude<CacheMode, "append">,
  tools: readonly RequestTool[],
  messages: readonly BaseMessage[],
  kept: readonly KeptTool[],
  shownCards: readonly ToolCard[],
): { tools: RequestTool[]; messages: BaseMessage[]; kept: readonly KeptTool[] } {
  const call = deferredBinding(mode, tools, kept, shownCards, SEARCH_TOOLS_DESCRIPTION);
  return { tools: call.tools, messages: providerMessages(mode, messages, call.deferred), kept: call.kept };
}
