import { randomUUID } from "node:crypto";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { z } from "zod";

/**
 * Test helpers of the lessons graph: a few support-desk tools, and a scripted chat model that
 * only changes what it does because of what it is shown (the system message the inject node
 * rendered, and the tools bound with their descriptions), the way a real model reads its prompt.
 */

export function deskTools(): StructuredToolInterface[] {
  const lookupOrder = tool(
    async ({ order_id }) => {
      if (!/^ORD-\d{6}$/.test(order_id)) throw new Error("Invalid order id: order ids must start with ORD-.");
      return `${order_id}: shipped`;
    },
    {
      name: "lookup_order",
      description: "Look up an order: its status, items and total.",
      schema: z.object({ order_id: z.string() }),
    },
  );
  const refundOrder = tool(async ({ order_id }) => `refunded ${order_id}`, {
    name: "refund_order",
    description: "Refund an order to the customer's original payment method.",
    schema: z.object({ order_id: z.string() }),
  });
  const sendEmail = tool(async () => "sent", {
    name: "send_email",
    description: "Send an email to a customer.",
    schema: z.object({ to: z.string(), body: z.string() }),
  });
  const trackParcel = tool(async () => "in transit", {
    name: "track_parcel",
    description: "Track a parcel shipment with the carrier.",
    schema: z.object({ tracking_no: z.string() }),
  });
  const searchDocs = tool(async () => "no result", {
    name: "search_docs",
    description: "Search the published product documentation.",
    schema: z.object({ q: z.string() }),
  });
  return [lookupOrder, refundOrder, sendEmail, trackParcel, searchDocs];
}

/** What the model saw at each call: the system message and the tools bound (with their descriptions). */
export interface Seen {
  system: string;
  tools: string[];
  descriptions: Record<string, string>;
  request: string;
}

function turnOf(messages: BaseMessage[]): { request: string; after: BaseMessage[] } {
  let i = messages.length - 1;
  while (i >= 0 && messages[i].getType() !== "human") i -= 1;
  return { request: i >= 0 ? String(messages[i].content) : "", after: messages.slice(i + 1) };
}

const call = (name: string, args: Record<string, unknown>) =>
  new AIMessage({ content: "", tool_calls: [{ id: `call_${randomUUID()}`, name, args, type: "tool_call" }] });

/** The desk's scripted model. `seen` is shared by every binding of it. */
export class DeskModel extends BaseChatModel {
  readonly bound: string[];
  readonly seen: Seen[];
  readonly descriptions: Record<string, string>;
  /** Whether it acts on what the tools' descriptions say (false: it is shown the notes and ignores them). */
  readonly readsNotes: boolean;

  constructor(bound: string[] = [], seen: Seen[] = [], descriptions: Record<string, string> = {}, readsNotes = true) {
    super({});
    this.bound = bound;
    this.seen = seen;
    this.descriptions = descriptions;
    this.readsNotes = readsNotes;
  }

  _llmType(): string {
    return "desk";
  }

  override bindTools(tools: unknown[] = []): this {
    const named = tools as { name: string; description?: unknown }[];
    return new DeskModel(
      named.map((t) => t.name),
      this.seen,
      Object.fromEntries(named.map((t) => [t.name, typeof t.description === "string" ? t.description : ""])),
      this.readsNotes,
    ) as this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const system = messages[0]?.getType() === "system" ? String(messages[0].content) : "";
    const { request, after } = turnOf(messages);
    this.seen.push({ system, tools: this.bound, descriptions: this.descriptions, request });
    const message = this.reply(system, request, after);
    return { generations: [{ text: String(message.content), message }] };
  }

  private reply(system: string, request: string, after: BaseMessage[]): AIMessage {
    const results = after.filter((m): m is ToolMessage => m instanceof ToolMessage);
    const lastResult = results.at(-1);
    const has = (name: string) => this.bound.includes(name);
    const digits = /(\d{6})/.exec(request)?.[1];
    if (/where is order/i.test(request) && has("lookup_order")) {
      // Sends the ORD- prefix first time only when what it is shown (the tool's description) says so.
      const knowsFormat = this.readsNotes && /order_id must look like ORD-/.test(this.descriptions.lookup_order ?? "");
      const typed = /ORD-\d{6}/.exec(request)?.[0];
      if (results.length === 0)
        return call("lookup_order", { order_id: typed ?? (knowsFormat ? `ORD-${digits}` : digits) });
      if (lastResult?.status === "error" && results.length === 1)
        return call("lookup_order", { order_id: `ORD-${digits}` });
      return new AIMessage(String(lastResult?.content ?? ""));
    }
    if (/\bemail\b/i.test(request) && /sarah/i.test(request) && !/^never/i.test(request)) {
      if (/\[critical\] never email sarah/i.test(system))
        return new AIMessage("I can't: a rule says never email Sarah.");
      if (has("send_email") && results.length === 0) return call("send_email", { to: "sarah@example.com", body: "hi" });
      return new AIMessage("sent");
    }
    if (/refund|money back/i.test(request) && has("refund_order")) {
      if (results.length === 0) return call("refund_order", { order_id: `ORD-${digits ?? "100000"}` });
      return new AIMessage("refunded");
    }
    return new AIMessage("Could you tell me more?");
  }
}

/** The tools each ToolMessage of the newest turn came from, and whether it failed. */
export function callsOfTurn(messages: BaseMessage[]): { tool: string; ok: boolean }[] {
  return turnOf(messages)
    .after.filter((m): m is ToolMessage => m instanceof ToolMessage)
    .map((m) => ({ tool: m.name ?? "", ok: m.status !== "error" }));
}

export const human = (text: string) => new HumanMessage(text);
