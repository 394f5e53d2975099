/**
 * The scripted model of the long-threads cache bench (`bench/cache-long.ts`), and how a model call
 * is rendered as a provider bills it.
 *
 * The model knows which tool each request needs. It holds a tool when the tool is bound live, or,
 * for a tool bound deferred (`extras.defer_loading`), when a `search_tools` answer earlier in the
 * thread referenced it (`tool_reference`), as a provider that loads deferred tools does. For the
 * newest request it calls the tool when it holds it, else `search_tools` when bound, then the
 * tool if the search brought it, then answers.
 */
import { BaseChatModel, type BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { SEARCH_TOOLS_NAME } from "../src/serve/tool-set.js";

/** One model call as the model received it. */
export interface ModelCall {
  bound: readonly BindToolsInput[];
  messages: readonly BaseMessage[];
}

/** The tool a request needs and the arguments the model calls it with. */
export type Want = { tool: string; args: Record<string, unknown>; query: string } | undefined;

type Block = Record<string, unknown>;

const isDeferred = (tool: BindToolsInput) =>
  (tool as { extras?: { defer_loading?: unknown } }).extras?.defer_loading === true;
const nameOf = (tool: BindToolsInput) => String((tool as { name?: unknown }).name);

/** The `tool_reference` names of a message's `tool_result` blocks (a provider-deferred search answer). */
function referenced(message: BaseMessage): string[] {
  if (message.getType() !== "human" || !Array.isArray(message.content)) return [];
  return (message.content as Block[]).flatMap((block) =>
    block.type === "tool_result" && Array.isArray(block.content)
      ? (block.content as Block[]).flatMap((b) => (b.type === "tool_reference" ? [String(b.tool_name)] : []))
      : [],
  );
}

const requestText = (message: BaseMessage) =>
  message.getType() === "human" && typeof message.content === "string" ? message.content : undefined;

let ids = 0;

export class DeferringModel extends BaseChatModel {
  constructor(
    readonly script: (request: string) => Want,
    readonly calls: ModelCall[],
    readonly bound: readonly BindToolsInput[] = [],
  ) {
    super({});
  }

  _llmType(): string {
    return "deferring";
  }

  override bindTools(tools: BindToolsInput[]): DeferringModel {
    return new DeferringModel(this.script, this.calls, tools);
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.calls.push({ bound: this.bound, messages: [...messages] });
    const request =
      [...messages]
        .reverse()
        .map(requestText)
        .find((t) => t !== undefined) ?? "";
    const want = this.script(request);
    const held = new Set([...this.bound.filter((t) => !isDeferred(t)).map(nameOf), ...messages.flatMap(referenced)]);
    const last = messages[messages.length - 1];
    const call = (name: string, args: Record<string, unknown>) => {
      const message = new AIMessage({
        content: "",
        tool_calls: [{ id: `call_${++ids}`, name, args, type: "tool_call" }],
      });
      return { generations: [{ text: "", message }] };
    };
    const answer = (text: string) => ({ generations: [{ text, message: new AIMessage(text) }] });
    if (!want) return answer("Nothing to do.");
    if (requestText(last) !== undefined) {
      if (held.has(want.tool)) return call(want.tool, want.args);
      if (held.has(SEARCH_TOOLS_NAME)) return call(SEARCH_TOOLS_NAME, { query: want.query });
      return answer("I have no tool for that.");
    }
    const searched = (ToolMessage.isInstance(last) && last.name === SEARCH_TOOLS_NAME) || referenced(last).length > 0;
    if (searched) return held.has(want.tool) ? call(want.tool, want.args) : answer("No tool found for that.");
    return answer("Done.");
  }
}

/** A tool definition as Anthropic's Messages API takes it (name, description, input schema). */
const definitions = new WeakMap<object, string>();
function definition(tool: BindToolsInput): string {
  const key = tool as object;
  let text = definitions.get(key);
  if (text === undefined) {
    const { function: f } = convertToOpenAITool(tool as never);
    text = JSON.stringify({ name: f.name, description: f.description, input_schema: f.parameters });
    definitions.set(key, text);
  }
  return text;
}

/**
 * One model call rendered as a provider that loads deferred tools renders it: the live tool
 * definitions first (a deferred one is left out), then the system message, then each message,
 * one JSON line each, with each `tool_reference` replaced by the referenced tool's definition at
 * that point. `toolsShown` counts the definitions in the rendering.
 */
export function rendered(call: ModelCall): { prompt: string; toolsShown: number } {
  const deferred = new Map(call.bound.filter(isDeferred).map((t) => [nameOf(t), t]));
  const lines = call.bound.filter((t) => !isDeferred(t)).map(definition);
  let toolsShown = lines.length;
  for (const message of call.messages) {
    const refs = referenced(message);
    if (refs.length > 0) {
      toolsShown += refs.length;
      lines.push(
        JSON.stringify({
          role: "user",
          content: (message.content as Block[]).map((block) =>
            block.type === "tool_result" && Array.isArray(block.content)
              ? { ...block, content: refs.map((name) => JSON.parse(definition(deferred.get(name) as BindToolsInput))) }
              : block,
          ),
        }),
      );
      continue;
    }
    const toolCalls = (message as AIMessage).tool_calls;
    lines.push(
      JSON.stringify({
        role: message.getType(),
        content: message.content,
        ...(toolCalls?.length ? { tool_calls: toolCalls.map((c) => ({ id: c.id, name: c.name, args: c.args })) } : {}),
        ...(ToolMessage.isInstance(message) ? { tool_call_id: message.tool_call_id } : {}),
      }),
    );
  }
  return { prompt: lines.join("\n"), toolsShown };
}
