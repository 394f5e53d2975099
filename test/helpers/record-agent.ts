import { randomUUID } from "node:crypto";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

/**
 * Test helpers of the record stage: a scripted chat model whose reply is a pure function of the
 * conversation (so any number of runs can share it in parallel), and the smallest real
 * LangGraph agent: an agent node, the prebuilt `ToolNode`, `toolsCondition`.
 */

/** A planned tool call: name and arguments. */
export interface PlannedCall {
  name: string;
  args: Record<string, unknown>;
}

/** Decides the model's reply from the messages it is given. */
export type Script = (messages: BaseMessage[]) => AIMessage;

/** A chat model that answers with whatever its script says. `bindTools` keeps the script. */
export class ScriptedChatModel extends BaseChatModel {
  readonly script: Script;

  constructor(script: Script) {
    super({});
    this.script = script;
  }

  _llmType(): string {
    return "scripted";
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = this.script(messages);
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }

  override bindTools(): this {
    return this;
  }
}

/** Model steps taken so far in this conversation: the AI messages after the newest human one. */
export function stepOf(messages: BaseMessage[]): number {
  let steps = 0;
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const type = messages[i].getType();
    if (type === "human") break;
    if (type === "ai") steps += 1;
  }
  return steps;
}

/**
 * A script that runs `plan(step)` for each step while it returns calls, then answers `final`.
 * Each AI message carries `usage_metadata` of `tokensPerStep` tokens when given.
 */
export function planScript(
  plan: (step: number, messages: BaseMessage[]) => PlannedCall[] | undefined,
  options: { final?: string; tokensPerStep?: number } = {},
): Script {
  return (messages) => {
    const calls = plan(stepOf(messages), messages);
    const usage =
      options.tokensPerStep !== undefined
        ? {
            usage_metadata: {
              input_tokens: options.tokensPerStep - 10,
              output_tokens: 10,
              total_tokens: options.tokensPerStep,
            },
          }
        : {};
    if (!calls || calls.length === 0) return new AIMessage({ content: options.final ?? "done", ...usage });
    return new AIMessage({
      content: "",
      tool_calls: calls.map((c) => ({
        id: `call_${randomUUID()}`,
        name: c.name,
        args: c.args,
        type: "tool_call" as const,
      })),
      ...usage,
    });
  };
}

/** The smallest real agent: model node → ToolNode → back, until the model stops calling tools. */
export function buildAgent(options: {
  model: ScriptedChatModel;
  tools: StructuredToolInterface[];
  checkpointer?: BaseCheckpointSaver;
}) {
  const { model, tools } = options;
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
    .addNode("tools", new ToolNode(tools))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile(options.checkpointer ? { checkpointer: options.checkpointer } : {});
}

/** A tool that answers at once: the cheapest call, for counting and timing. */
export const echoTool = tool(async ({ n }) => `ok ${n}`, {
  name: "echo",
  description: "Echo a number back.",
  schema: z.object({ n: z.number() }),
});

/** Two echo calls in the first step, then the answer: a run of 2 call records and 1 turn. */
export const echoTwice: Script = planScript((step) =>
  step === 0
    ? [
        { name: "echo", args: { n: 1 } },
        { name: "echo", args: { n: 2 } },
      ]
    : undefined,
);

/** {@link buildAgent} with {@link echoTwice} and {@link echoTool}. */
export function echoTwiceAgent() {
  return buildAgent({ model: new ScriptedChatModel(echoTwice), tools: [echoTool] });
}

/** A few ordinary tools with zod schemas. */
export function shopTools() {
  const lookupOrder = tool(
    async ({ order_id }) => {
      if (!/^ORD-\d+$/.test(order_id)) throw new Error(`Order ${order_id} not found`);
      return JSON.stringify({ order_id, status: "shipped" });
    },
    {
      name: "lookup_order",
      description: "Look up an order by its id (ORD-123456).",
      schema: z.object({ order_id: z.string() }),
    },
  );
  const refund = tool(
    async ({ order_id, amount }) => {
      if (amount > 1000) throw new Error(`Refund of ${amount} for ${order_id} is not allowed: permission denied`);
      return `refunded ${amount}`;
    },
    {
      name: "refund",
      description: "Refund an amount on an order.",
      schema: z.object({ order_id: z.string(), amount: z.number() }),
    },
  );
  const sendEmail = tool(async ({ to }) => `sent to ${to}`, {
    name: "send_email",
    description: "Send an email.",
    schema: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
  });
  return [lookupOrder, refund, sendEmail];
}
