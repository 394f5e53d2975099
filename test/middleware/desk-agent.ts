/**
 * Test helpers of the middleware: the support desk's scripted model, made to keep what each model
 * call was shown (the bound tools with their descriptions, the system message) and to obey a
 * pinned critical rule of the email tool, and a real `createAgent` agent around it.
 */
import { BaseChatModel, type BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { type BaseStore, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { type BoundTool, ScriptedSupportModel, supportDeskTools } from "../../examples/support-desk.js";
import { toolLessonsMiddleware, type ToolLessonsMiddlewareOptions } from "../../src/middleware/index.js";
import { latestHumanTurn, messageText } from "../../src/caller/request.js";

/** What one model call was shown. */
export interface ModelView {
  /** The bound tools, by name, with the description sent. */
  tools: BoundTool[];
  /** Whether each bound tool was the agent's registered instance (not a plain definition). */
  instances: boolean[];
  /** The system message's text. */
  system: string;
  /** The request the call served. */
  request: string;
}

/**
 * The support desk's scripted model (`examples/support-desk.ts`), which changes what it does only
 * because of what it is shown, plus one habit: it will not email someone a pinned critical rule of
 * `send_email` names; it says which rule stops it.
 */
export class DeskModel extends BaseChatModel {
  constructor(
    readonly views: ModelView[],
    readonly bound: readonly BindToolsInput[] = [],
  ) {
    super({});
  }

  _llmType(): string {
    return "desk";
  }

  override bindTools(tools: BindToolsInput[]): DeskModel {
    return new DeskModel(this.views, tools);
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const tools = this.bound.map((t) => {
      const named = t as { name?: unknown; description?: unknown };
      return { name: String(named.name), description: typeof named.description === "string" ? named.description : "" };
    });
    const systemMessage = messages.find((m) => m.getType() === "system");
    const system = systemMessage ? messageText(systemMessage) : "";
    const request = latestHumanTurn(messages)?.text ?? "";
    this.views.push({
      tools,
      instances: this.bound.map((t) => typeof (t as { invoke?: unknown }).invoke === "function"),
      system,
      request,
    });
    const refusal = refusalOf(system, request);
    if (refusal) return { generations: [{ text: refusal, message: new AIMessage(refusal) }] };
    return new ScriptedSupportModel(tools)._generate(messages);
  }
}

/** The model's reply when a pinned critical rule of send_email names whoever the request asks it to email. */
function refusalOf(system: string, request: string): string | undefined {
  if (!/\b(email|send|write)\b/i.test(request)) return undefined;
  const to = /([\w.+-]+)@[\w-]+\.[\w.]+/.exec(request)?.[1]?.split(/[._]/)[0];
  if (!to) return undefined;
  const emailRules = system.split("### `send_email`")[1]?.split("\n### ")[0] ?? "";
  const rule = emailRules
    .split("\n")
    .find((line) => line.startsWith("- [critical]") && new RegExp(`\\b${to}\\b`, "i").test(line));
  return rule ? `I won't email ${to}: a pinned rule says "${rule.slice("- [critical] ".length)}"` : undefined;
}

/** A real createAgent agent over the support desk's tools with the middleware and a checkpointer. */
export function deskAgent(options: ToolLessonsMiddlewareOptions & { views: ModelView[]; store?: BaseStore }) {
  const { views, store, ...middleware } = options;
  const tools = supportDeskTools();
  const agent = createAgent({
    model: new DeskModel(views),
    tools,
    middleware: [toolLessonsMiddleware(middleware)],
    checkpointer: new MemorySaver(),
    ...(store ? { store } : {}),
  });
  return { agent, tools };
}

/** The tool calls of the newest turn, in order, with whether each ran. */
export function callsOf(messages: readonly BaseMessage[]): { tool: string; ok: boolean }[] {
  let start = messages.length - 1;
  while (start >= 0 && messages[start].getType() !== "human") start -= 1;
  return messages
    .slice(start + 1)
    .filter((m) => m.getType() === "tool")
    .map((m) => ({ tool: (m as { name?: string }).name ?? "", ok: (m as { status?: string }).status !== "error" }));
}

/** The final answer of the newest turn. */
export function answerOf(messages: readonly BaseMessage[]): string {
  const last = messages[messages.length - 1];
  return last && last.getType() === "ai" ? messageText(last) : "";
}
