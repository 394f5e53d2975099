/**
 * Test helper of the cache-keeping mode: a scripted chat model that keeps what each call was
 * bound with (names and descriptions, in order) and the system message, and, for the newest
 * request, calls the tool its script names when that tool is bound, else `search_tools` once,
 * then the tool if the search brought it, then answers.
 */
import { BaseChatModel, type BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { SEARCH_TOOLS_NAME } from "../../src/serve/tool-set.js";

/** What one model call was shown. */
export interface CallView {
  tools: { name: string; description: string }[];
  system: string;
  /** The tools exactly as bound (for serializing them as a provider sees them). */
  bound: readonly BindToolsInput[];
  /** The messages of the call, system message included. */
  messages: readonly BaseMessage[];
}

/** What the script does for a request: the tool it wants and the arguments it calls it with. */
export type Script = (request: string) => { tool: string; args: Record<string, unknown>; query?: string } | undefined;

let ids = 0;

export class SeekingModel extends BaseChatModel {
  constructor(
    readonly script: Script,
    readonly views: CallView[] = [],
    readonly bound: readonly { name: string; description: string }[] = [],
    readonly raw: readonly BindToolsInput[] = [],
  ) {
    super({});
  }

  _llmType(): string {
    return "seeking";
  }

  override bindTools(tools: BindToolsInput[]): SeekingModel {
    const bound = tools.map((t) => {
      const named = t as { name?: unknown; description?: unknown };
      return { name: String(named.name), description: typeof named.description === "string" ? named.description : "" };
    });
    return new SeekingModel(this.script, this.views, bound, tools);
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const system = messages.find((m) => m.getType() === "system");
    this.views.push({
      tools: [...this.bound],
      system: system ? String(system.content) : "",
      bound: this.raw,
      messages: [...messages],
    });
    let h = messages.length - 1;
    while (h >= 0 && messages[h].getType() !== "human") h -= 1;
    const request = h >= 0 ? String(messages[h].content) : "";
    const want = this.script(request);
    const last = messages[messages.length - 1];
    const has = (name: string) => this.bound.some((t) => t.name === name);
    const call = (name: string, args: Record<string, unknown>) => {
      const message = new AIMessage({
        content: "",
        tool_calls: [{ id: `call_${++ids}`, name, args, type: "tool_call" }],
      });
      return { generations: [{ text: "", message }] };
    };
    const answer = (text: string) => ({ generations: [{ text, message: new AIMessage(text) }] });
    if (!want) return answer("Nothing to do.");
    if (last.getType() === "human") {
      if (has(want.tool)) return call(want.tool, want.args);
      if (has(SEARCH_TOOLS_NAME)) return call(SEARCH_TOOLS_NAME, { query: want.query ?? request });
      return answer("I have no tool for that.");
    }
    if (ToolMessage.isInstance(last) && last.name === SEARCH_TOOLS_NAME) {
      return has(want.tool) ? call(want.tool, want.args) : answer("No tool found for that.");
    }
    return answer("Done.");
  }
}

/**
 * A thread of support-desk requests whose routed sets differ turn to turn (each names a different
 * tool), with the tool and arguments the scripted model calls for each.
 */
export const DESK_THREAD: readonly { request: string; tool: string; args: Record<string, unknown>; query?: string }[] =
  [
    { request: "Where is order ORD-482913?", tool: "lookup_order", args: { order_id: "ORD-482913" } },
    {
      request: "Please refund 5 on order ORD-482913.",
      tool: "refund_order",
      args: { order_id: "ORD-482913", amount: 5 },
    },
    {
      request: "Track the parcel of ORD-482913 with the carrier.",
      tool: "track_shipment",
      args: { order_id: "ORD-482913" },
    },
    { request: "I forgot my password, send me a reset link.", tool: "reset_password", args: { email: "a@b.test" } },
    { request: "What plan is my account on, and since when?", tool: "get_account", args: { email: "a@b.test" } },
    { request: "Where is order ORD-771204?", tool: "lookup_order", args: { order_id: "ORD-771204" } },
    { request: "Is there a help center guide on billing?", tool: "search_public_docs", args: { query: "billing" } },
    { request: "Refund 3 on ORD-771204 please.", tool: "refund_order", args: { order_id: "ORD-771204", amount: 3 } },
  ];

/** The scripted model's script for {@link DESK_THREAD} (and any extra entries). */
export function deskScript(extra: typeof DESK_THREAD = []): Script {
  const all = [...DESK_THREAD, ...extra];
  return (request) => all.find((t) => t.request === request);
}

/** Whether `before` is `after`'s first tools, each byte-identical (name and description). */
export function isPrefix(before: CallView["tools"], after: CallView["tools"]): boolean {
  return (
    before.length <= after.length &&
    before.every((t, i) => t.name === after[i].name && t.description === after[i].description)
  );
}
