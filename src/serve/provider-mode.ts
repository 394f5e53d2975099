/**
 * Provider-deferred cache keeping (`ServeOptions.deferredLoading`): instead of appending the tools
 * a thread finds to the tools array (which rebuilds every cached byte after it, the whole
 * conversation), every tool of the agent is sent marked as deferred, and the provider loads the
 * ones `search_tools` names inline, at the point of the answer, leaving the cached prefix as it
 * was. `search_tools` stays the package's learned routing; only its wire form changes:
 *
 * - **Anthropic** (`ChatAnthropic`): each tool is a custom tool with `defer_loading: true`;
 *   `search_tools` is a custom tool of its own (not deferred), and its answer goes back as a
 *   `tool_result` whose content is one `tool_reference` block per tool found.
 * - **OpenAI Responses** (`ChatOpenAI` on the Responses API): each function has
 *   `defer_loading: true`; the search is the `tool_search` tool with `execution: "client"`. The
 *   model's `tool_search_call` is run as a call of `search_tools` (so the agent's tool node runs,
 *   records and answers it), and its answer goes back as the `tool_search_output` item after the
 *   call, listing the found functions' definitions.
 *
 * Each tool's definition is the one frozen for the thread (`KeptTool`, the thread's state), so the
 * tools array is byte-identical from one call of a thread to the next. Everything here is pure
 * except {@link withSearchCalls}, which adds tool calls to the reply it is given (see there).
 * Neither provider package is imported: the model is recognised by its class name.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import type { ToolSource } from "../ledger/cards.js";
import type { ToolCard } from "../ledger/schema.js";
import { isRecord, SEARCH_TOOLS_NAME } from "../internal.js";
import { describerOf, growKept, type KeptTool, type SearchToolsArtifact } from "./tool-set.js";

/**
 * How cache-keeping mode keeps the provider's prompt cache: `"auto"` picks from the agent's model
 * (`"anthropic"` for `ChatAnthropic`, `"openai"` for `ChatOpenAI` on the Responses API, else
 * `"append"`); the others force one. `"append"` is the provider-neutral mode: found tools are
 * appended to the tools array.
 */
export type DeferredLoading = "auto" | "append" | "anthropic" | "openai";

/** The wire form a cache-keeping model call takes. */
export type CacheMode = "append" | "anthropic" | "openai";

/** What is read of a chat model to tell its provider (no provider package is imported). */
interface ModelView {
  getName?: () => string;
  _defaultConfig?: { modelProvider?: unknown; useResponsesApi?: unknown };
  useResponsesApi?: unknown;
  _useResponsesApi?: (options: object) => unknown;
}

/** The cache mode for a model call: the forced one, or the one the model's provider supports. */
export function cacheModeOf(model: unknown, deferredLoading: DeferredLoading = "auto"): CacheMode {
  if (deferredLoading !== "auto") return deferredLoading;
  if (!isRecord(model)) return "append";
  const view = model as ModelView;
  let name: string | undefined;
  try {
    name = typeof view.getName === "function" ? view.getName() : undefined;
  } catch {
    name = undefined;
  }
  const configured = name === "ConfigurableModel" ? view._defaultConfig : undefined;
  if (name === "ChatAnthropic" || configured?.modelProvider === "anthropic") return "anthropic";
  if (name === "ChatOpenAI" && usesResponsesApi(view)) return "openai";
  if (configured?.modelProvider === "openai" && configured.useResponsesApi === true) return "openai";
  return "append";
}

/** True when a `ChatOpenAI` speaks the Responses API on its own (not only because of the tools bound). */
function usesResponsesApi(view: ModelView): boolean {
  if (view.useResponsesApi === true) return true;
  try {
    return typeof view._useResponsesApi === "function" && view._useResponsesApi({}) === true;
  } catch {
    return false;
  }
}

/** A tool definition sent deferred: the frozen description, the tool's own schema, `defer_loading`. */
export interface DeferredToolDefinition {
  name: string;
  description: string;
  /** The registered tool's own schema (zod or JSON schema), unchanged. */
  schema: unknown;
  /** Read by `@langchain/anthropic` and `@langchain/openai` when they format a tool. */
  extras: { defer_loading: true };
}

/**
 * The thread's kept tools as deferred definitions, in kept order (only those among `tools`, the
 * agent's own). Plain definitions, not the registered instances: `createAgent` accepts them
 * (see `toolsForModel`), and the agent's tool node runs the registered tool under that name.
 */
export function deferredTools(kept: readonly KeptTool[], tools: readonly object[]): DeferredToolDefinition[] {
  const byName = new Map<string, object>();
  for (const tool of tools) {
    const name = (tool as { name?: unknown }).name;
    if (typeof name === "string") byName.set(name, tool);
  }
  const out: DeferredToolDefinition[] = [];
  for (const { name, description } of kept) {
    const tool = byName.get(name);
    if (!tool || name === SEARCH_TOOLS_NAME) continue;
    out.push({ name, description, schema: (tool as { schema?: unknown }).schema, extras: { defer_loading: true } });
  }
  return out;
}

/**
 * The tools of one provider-deferred model call: `search_tools` first (the registered tool,
 * `search`, for Anthropic; the client-executed `tool_search`, described by `searchDescription`,
 * for OpenAI), then every named tool deferred, each with the description frozen for the thread
 * (`kept`, grown by the tools the thread has not seen yet, described by `shownCards`), then the
 * tools without a name (a provider's own) as they are. Returns the deferred definitions too (for
 * {@link providerMessages}) and the grown kept set (`kept` itself when nothing was added). Pure.
 */
export function deferredBinding(
  mode: Exclude<CacheMode, "append">,
  tools: readonly object[],
  kept: readonly KeptTool[],
  shownCards: readonly ToolCard[],
  searchDescription: string,
): { tools: object[]; deferred: DeferredToolDefinition[]; kept: readonly KeptTool[] } {
  const own: ToolSource[] = [];
  const unnamed: object[] = [];
  let search: object | undefined;
  for (const tool of tools) {
    const name = (tool as { name?: unknown }).name;
    if (typeof name !== "string") unnamed.push(tool);
    else if (name === SEARCH_TOOLS_NAME) search = tool;
    else own.push(tool as ToolSource);
  }
  const grown = growKept(
    kept,
    own.map((t) => t.name),
    describerOf(own, shownCards),
    new Set(own.map((t) => t.name)),
  );
  const deferred = deferredTools(grown, own);
  const first = mode === "openai" ? openAiToolSearch(searchDescription) : search;
  return { tools: [...(first ? [first] : []), ...deferred, ...unnamed], deferred, kept: grown };
}

/** The query's JSON schema as the Responses API's client-executed `tool_search` takes it. */
const SEARCH_PARAMETERS = Object.freeze({
  type: "object",
  properties: {
    query: {
      type: "string",
      description: "What you need a tool for, in a few words (e.g. 'refund an order', 'look up a shipment').",
    },
  },
  required: ["query"],
  additionalProperties: false,
});

/** The Responses API's client-executed tool search, described as `search_tools` is. */
export function openAiToolSearch(description: string) {
  return { type: "tool_search", execution: "client", description, parameters: SEARCH_PARAMETERS };
}

/** A found tool's definition in a `tool_search_output` item: as the function is sent, deferred. */
function functionDefinition(tool: DeferredToolDefinition) {
  return {
    type: "function",
    name: tool.name,
    description: tool.description,
    parameters: toJsonSchema(tool.schema as Parameters<typeof toJsonSchema>[0]),
    defer_loading: true,
  };
}

/** The tools a `search_tools` answer found, from its artifact (only well-formed entries). */
function foundIn(message: ToolMessage): string[] {
  const found = (message.artifact as Partial<SearchToolsArtifact> | undefined)?.found;
  return Array.isArray(found) ? found.flatMap((t) => (isRecord(t) && typeof t.name === "string" ? [t.name] : [])) : [];
}

/**
 * The thread's messages as the provider must see them in a deferred call: each `search_tools`
 * answer turned into the provider's own form, naming only tools sent deferred (`deferred`). The
 * same messages give the same view, so every byte before the newest message stays as it was.
 */
export function providerMessages(
  mode: CacheMode,
  messages: readonly BaseMessage[],
  deferred: readonly DeferredToolDefinition[],
): BaseMessage[] {
  if (mode === "append") return [...messages];
  const byName = new Map(deferred.map((t) => [t.name, t]));
  return mode === "anthropic" ? anthropicView(messages, byName) : openAiView(messages, byName);
}

/** Anthropic: a `search_tools` answer is a `tool_result` of `tool_reference` blocks. */
function anthropicView(messages: readonly BaseMessage[], byName: Map<string, DeferredToolDefinition>): BaseMessage[] {
  return messages.map((message) => {
    if (!ToolMessage.isInstance(message) || message.name !== SEARCH_TOOLS_NAME) return message;
    const names = foundIn(message).filter((name) => byName.has(name));
    if (names.length === 0) return message;
    // `@langchain/anthropic` keeps a user message's `tool_result` block as it is (a tool message's
    // content blocks of other types are dropped), and merges it with the tool results around it.
    return new HumanMessage({
      content: [
        {
          type: "tool_result",
          tool_use_id: message.tool_call_id,
          content: names.map((tool_name) => ({ type: "tool_reference", tool_name })),
        },
      ],
    });
  });
}

/** One item of a Responses API output, as `@langchain/openai` keeps it in `response_metadata.output`. */
type OutputItem = Record<string, unknown>;

function outputOf(message: BaseMessage): OutputItem[] | undefined {
  const output = (message.response_metadata as { output?: unknown } | undefined)?.output;
  return Array.isArray(output) && output.every(isRecord) ? (output as OutputItem[]) : undefined;
}

function isClientSearchCall(item: OutputItem): boolean {
  return item.type === "tool_search_call" && item.execution === "client";
}

/** The id a client `tool_search_call` is answered under (and run as a tool call with). */
function callIdOf(item: OutputItem): string | undefined {
  return typeof item.call_id === "string" ? item.call_id : typeof item.id === "string" ? item.id : undefined;
}

/**
 * OpenAI: the assistant message whose output holds a client `tool_search_call` is replayed with
 * the `tool_search_output` right after that call (`@langchain/openai` replays an assistant
 * message's `response_metadata.output` as it is), and the `search_tools` tool message that
 * answered it is left out (it would go as a `function_call_output` of a call that is none).
 */
function openAiView(messages: readonly BaseMessage[], byName: Map<string, DeferredToolDefinition>): BaseMessage[] {
  const answers = new Map<string, ToolMessage>();
  for (const message of messages) {
    if (ToolMessage.isInstance(message) && message.name === SEARCH_TOOLS_NAME)
      answers.set(message.tool_call_id, message);
  }
  if (answers.size === 0) return [...messages];
  const answered = new Set<string>();
  const out: BaseMessage[] = [];
  for (const message of messages) {
    const output = AIMessage.isInstance(message) ? outputOf(message) : undefined;
    if (output && output.some(isClientSearchCall)) {
      const items = output.flatMap((item) => {
        const id = isClientSearchCall(item) ? callIdOf(item) : undefined;
        const answer = id === undefined ? undefined : answers.get(id);
        if (id === undefined || !answer) return [item];
        answered.add(id);
        const tools = foundIn(answer).flatMap((name) => {
          const tool = byName.get(name);
          return tool ? [functionDefinition(tool)] : [];
        });
        return [item, { type: "tool_search_output", call_id: id, execution: "client", status: "completed", tools }];
      });
      out.push(
        new AIMessage({
          content: message.content,
          tool_calls: (message as AIMessage).tool_calls ?? [],
          additional_kwargs: message.additional_kwargs,
          response_metadata: { ...message.response_metadata, output: items },
          ...(message.id ? { id: message.id } : {}),
          ...(message.name ? { name: message.name } : {}),
        }),
      );
      continue;
    }
    if (ToolMessage.isInstance(message) && message.name === SEARCH_TOOLS_NAME && answered.has(message.tool_call_id))
      continue;
    out.push(message);
  }
  return out;
}

/**
 * OpenAI: the model's client `tool_search_call`s made calls of `search_tools`, so the agent's tool
 * node runs them like any tool call (recorded, answered by learned routing). Adds them to
 * `reply`'s tool calls in place, as langchain's own agent node sets a reply's name in place: a
 * middleware that also updates state returns a `Command`, and the agent keeps the reply object
 * it was handed. Returns `reply`. A reply of another mode is returned untouched.
 */
export function withSearchCalls<T extends BaseMessage>(mode: CacheMode, reply: T): T {
  if (mode !== "openai" || !AIMessage.isInstance(reply)) return reply;
  const calls = (outputOf(reply) ?? []).filter(isClientSearchCall);
  if (calls.length === 0) return reply;
  const have = new Set((reply.tool_calls ?? []).map((c) => c.id));
  const added = calls.flatMap((item) => {
    const id = callIdOf(item);
    if (id === undefined || have.has(id)) return [];
    return [{ name: SEARCH_TOOLS_NAME, args: searchArgs(item.arguments), id, type: "tool_call" as const }];
  });
  if (added.length === 0) return reply;
  const toolCalls = [...(reply.tool_calls ?? []), ...added];
  reply.tool_calls = toolCalls;
  (reply.lc_kwargs as { tool_calls?: unknown }).tool_calls = toolCalls;
  return reply;
}

/** A `tool_search_call`'s arguments as `search_tools` takes them (an object, or its JSON text). */
function searchArgs(args: unknown): Record<string, unknown> {
  if (isRecord(args)) return args as Record<string, unknown>;
  if (typeof args === "string") {
    try {
      const parsed: unknown = JSON.parse(args);
      if (isRecord(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // Not JSON: searched as nothing (search_tools answers that nothing was found).
    }
  }
  return { query: "" };
}
