import { BaseChatModel, type BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

/** What the script answers for one call: a tool to call, none (`null`: plain text), or an error to throw. */
export type Reply = string | null | Error;

/**
 * A chat model for the harness tests: the reply is a function of the user turn and how many
 * times that turn was asked before, so repeats can disagree, and calls can fail.
 */
export class ScriptedToolModel extends BaseChatModel {
  readonly asked = new Map<string, number>();
  /** The tools of the last bindTools call. */
  bound: BindToolsInput[] = [];
  /** The messages of every call. */
  readonly calls: BaseMessage[][] = [];
  inFlight = 0;
  maxInFlight = 0;
  temperature: number | undefined;

  constructor(
    private readonly script: (turn: string, attempt: number) => Reply,
    options: { temperature?: number; delayMs?: number } = {},
  ) {
    super({});
    this.temperature = options.temperature;
    this.delayMs = options.delayMs ?? 0;
  }

  private readonly delayMs: number;

  _llmType(): string {
    return "scripted-tools";
  }

  override bindTools(tools: BindToolsInput[]): this {
    this.bound = tools;
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.calls.push(messages);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
      const turn = String(messages[messages.length - 1].content);
      const attempt = this.asked.get(turn) ?? 0;
      this.asked.set(turn, attempt + 1);
      const reply = this.script(turn, attempt);
      if (reply instanceof Error) throw reply;
      const message =
        reply === null
          ? new AIMessage({ content: "Happy to help with that myself." })
          : new AIMessage({
              content: "",
              tool_calls: [{ id: `call_${attempt}`, name: reply, args: {}, type: "tool_call" }],
            });
      return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
    } finally {
      this.inFlight -= 1;
    }
  }
}

/** An error shaped like a provider's HTTP 429. */
export function rateLimited(retryAfterSeconds?: number): Error {
  return Object.assign(new Error("429 Too Many Requests"), {
    status: 429,
    ...(retryAfterSeconds !== undefined ? { headers: { "retry-after": String(retryAfterSeconds) } } : {}),
  });
}
