/**
 * The agent the corpus runs through: a real LangGraph graph (the prebuilt `ToolNode`,
 * `toolsCondition`, tools made with `tool()` and zod), with or without the package's route node,
 * and a scripted chat model that keeps what it is shown on every call.
 */
import type { BindToolsInput, BaseChatModelCallOptions } from "@langchain/core/language_models/chat_models";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import { AIMessage, type AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import type { Runnable } from "@langchain/core/runnables";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { bindRoutedTools, createRouteNode } from "../../src/graph/route-node.js";
import { ToolLessonsAnnotation } from "../../src/graph/state.js";
import type { ToolRouter } from "../../src/routing/router.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import { withDescriptions } from "../../src/prompt/describe.js";
import type { PlannedCall } from "../helpers/record-agent.js";
import { stepOf } from "../helpers/record-agent.js";

/** A tool as the model is sent it: its name and the description bound for this call. */
export interface BoundTool {
  name: string;
  description: string;
}

interface RecordingCallOptions extends BaseChatModelCallOptions {
  tools?: BoundTool[];
}

/** The model's next calls for one step of the current run, or none to answer. */
export type Plan = (step: number, messages: BaseMessage[]) => PlannedCall[] | undefined;

/** Text of a message's content (string, or text parts joined by a space). */
export function contentText(message: BaseMessage): string {
  const content = message.content;
  if (typeof content === "string") return content;
  return content
    .map((part) => (typeof part === "string" ? part : "text" in part && typeof part.text === "string" ? part.text : ""))
    .join(" ");
}

/**
 * A scripted chat model that binds tools as provider models do (sent with each call, here as
 * name and description) and keeps what it was shown:
 * - every bound tool description of every call (deduplicated), and every system message;
 * - while {@link probing}, every message of the call too. During the corpus's own traffic the
 *   human, AI and tool messages are the conversation itself (the user typed the planted text, the
 *   tool returned it): only what the package adds to a call is the package's output then.
 */
export class RecordingChatModel extends BaseChatModel<RecordingCallOptions> {
  /** The plan of the run in progress (runs are invoked one at a time). */
  plan: Plan = () => undefined;
  probing = false;
  calls = 0;
  readonly descriptions = new Set<string>();
  readonly systemMessages = new Set<string>();
  readonly probeMessages: string[] = [];

  constructor() {
    super({});
  }

  _llmType(): string {
    return "recording-scripted";
  }

  override bindTools(tools: BindToolsInput[]): Runnable<BaseLanguageModelInput, AIMessageChunk, RecordingCallOptions> {
    const bound = tools.map((t) => {
      const named = t as { name?: unknown; description?: unknown };
      return { name: String(named.name), description: typeof named.description === "string" ? named.description : "" };
    });
    return this.withConfig({ tools: bound });
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    this.calls += 1;
    for (const t of options.tools ?? []) this.descriptions.add(`${t.name}: ${t.description}`);
    for (const m of messages) {
      if (m.getType() === "system") this.systemMessages.add(contentText(m));
      if (this.probing) this.probeMessages.push(contentText(m));
    }
    const calls = this.plan(stepOf(messages), messages);
    const message =
      calls && calls.length > 0
        ? new AIMessage({
            content: "",
            tool_calls: calls.map((c, i) => ({
              id: `call_${this.calls}_${i}`,
              name: c.name,
              args: c.args,
              type: "tool_call" as const,
            })),
          })
        : new AIMessage("Done.");
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }
}

/** What the agent node needs to describe the tools as the partition's cards say. */
export interface AgentParts {
  model: RecordingChatModel;
  tools: StructuredToolInterface[];
  ledger: Ledger;
  partition: string;
}

/**
 * The agent without routing: every tool bound each step, described by the partition's cards
 * under the partition's settings (`showLearnedExamples`).
 */
export function plainAgent({ model, tools, ledger, partition }: AgentParts) {
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state, config) => {
      const [cards, settings] = await Promise.all([ledger.listCards(partition), ledger.getSettings(partition)]);
      const bound = model.bindTools(withDescriptions(tools, cards, settings) as unknown as BindToolsInput[]);
      return { messages: [await bound.invoke(state.messages, config)] };
    })
    .addNode("tools", new ToolNode(tools))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile();
}

/**
 * The agent with the package's route node in front: the routed tools bound with the cards the
 * route node read, under the partition's settings.
 */
export function routedAgent(parts: AgentParts & { router: ToolRouter; onError: (error: unknown) => void }) {
  const { model, tools, ledger, partition, router, onError } = parts;
  return new StateGraph(ToolLessonsAnnotation)
    .addNode(
      "route",
      createRouteNode({ router, ledger, failureSink: (failure) => onError(failure.error ?? failure.message) }),
    )
    .addNode("agent", async (state, config) => {
      const settings = await ledger.getSettings(partition);
      const bound = bindRoutedTools(model, tools, state.routedTools, state.routedCards, settings);
      return { messages: [await bound.invoke(state.messages, config)] };
    })
    .addNode("tools", new ToolNode(tools))
    .addEdge(START, "route")
    .addEdge("route", "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile();
}
