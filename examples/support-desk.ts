/**
 * The demo's support desk: eight ordinary tools, written the way an engineer writes them before
 * anyone has used them, and a scripted chat model that makes the mistakes real models make.
 *
 * The model is scripted, not smart: it reads the latest user message, the tool results since,
 * and the descriptions of the tools it was bound with, and follows fixed habits:
 *
 * - it copies an order number as the user typed it (`482913`), unless the bound description of
 *   the tool shows the `ORD-` format; when a tool refuses the id and the error says the prefix is
 *   required, it retries with the prefix;
 * - it passes a money amount as the text the user typed (`"25.00"`), unless the bound description
 *   says the amount is a number; when the schema refuses it, it retries with a number;
 * - for a "how do I …" question it reaches for the public docs, unless the public docs tool's
 *   description says "Not for <words> requests; use <tool>" and the question has those words;
 *   when the user asks again for the internal runbook, it uses the runbooks tool.
 *
 * - it reads the system message the way it reads a description: the lessons block's section of a
 *   bound tool (`### \`name\``) counts as part of that tool's description, and it will not email
 *   someone a pinned critical rule ("[critical] … never email <name>") names;
 * - "money back" is a refund to it, when it can see the refund tool (without an order number it
 *   asks which order).
 *
 * So whatever it does differently after a lesson is applied, it does because of what it is shown.
 */
import type { BaseChatModelParams } from "@langchain/core/language_models/chat_models";
import { BaseChatModel, type BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { z } from "zod";

// ---------------------------------------------------------------- the tools

/** Order ids look like ORD-482913. The author of the tools knew; the descriptions do not say. */
const ORDER_ID = /^ORD-\d{6}$/;

function requireOrderId(orderId: string): void {
  if (!ORDER_ID.test(orderId)) {
    throw new Error(`Invalid order id "${orderId}": order ids must start with "ORD-" followed by six digits.`);
  }
}

/** A made-up but stable order for an id, so every run of the demo prints the same thing. */
function orderFor(orderId: string) {
  const n = Number(orderId.slice(-6));
  const statuses = ["processing", "shipped", "delivered", "out for delivery"] as const;
  return {
    order_id: orderId,
    status: statuses[n % statuses.length],
    items: n % 2 === 0 ? ["ceramic mug", "tea sampler"] : ["wool scarf"],
    total: (n % 90) + 10,
  };
}

/** The support desk's tools, made with `tool()` and zod as any LangChain.js agent's tools are. */
export function supportDeskTools() {
  const lookupOrder = tool(
    async ({ order_id }) => {
      requireOrderId(order_id);
      return JSON.stringify(orderFor(order_id));
    },
    {
      name: "lookup_order",
      description: "Look up an order: its status, items and total.",
      schema: z.object({ order_id: z.string().describe("The order's id.") }),
    },
  );

  const refundOrder = tool(
    async ({ order_id, amount }) => {
      requireOrderId(order_id);
      const { total } = orderFor(order_id);
      if (amount > total) throw new Error(`Refund amount must be at most the order total (${total}).`);
      return `Refunded ${amount.toFixed(2)} on ${order_id}.`;
    },
    {
      name: "refund_order",
      description: "Refund part or all of an order to the customer's original payment method.",
      schema: z.object({
        order_id: z.string().describe("The order's id."),
        amount: z.number().positive().describe("Amount to refund, in the order's currency."),
      }),
    },
  );

  const trackShipment = tool(
    async ({ order_id }) => {
      requireOrderId(order_id);
      return `${order_id}: with the carrier, expected in 2 days.`;
    },
    {
      name: "track_shipment",
      description: "Track the parcel of a shipped order with the carrier.",
      schema: z.object({ order_id: z.string().describe("The order's id.") }),
    },
  );

  const getAccount = tool(async ({ email }) => JSON.stringify({ email, plan: "plus", since: 2021 }), {
    name: "get_account",
    description: "Get a customer's account: plan, sign-up date and contact details.",
    schema: z.object({ email: z.string().describe("The customer's email address.") }),
  });

  const resetPassword = tool(async () => "A password reset link was sent.", {
    name: "reset_password",
    description: "Send a customer a link to reset their password.",
    schema: z.object({ email: z.string().describe("The customer's email address.") }),
  });

  const sendEmail = tool(async ({ to }) => `Email queued for ${to}.`, {
    name: "send_email",
    description: "Send an email to a customer.",
    schema: z.object({
      to: z.string().describe("Recipient address."),
      subject: z.string(),
      body: z.string(),
    }),
  });

  const searchPublicDocs = tool(async ({ query }) => `Help center: 3 articles match "${query}".`, {
    name: "search_public_docs",
    description: "Search the public help center: how-to guides for customers about orders, billing and accounts.",
    schema: z.object({ query: z.string() }),
  });

  const searchInternalRunbooks = tool(async ({ query }) => `Runbooks: 1 procedure matches "${query}".`, {
    name: "search_internal_runbooks",
    description: "Search the team's internal runbooks: step-by-step procedures for engineers and support staff.",
    schema: z.object({ query: z.string() }),
  });

  return [
    lookupOrder,
    refundOrder,
    trackShipment,
    getAccount,
    resetPassword,
    sendEmail,
    searchPublicDocs,
    searchInternalRunbooks,
  ];
}

// ---------------------------------------------------------------- the scripted model

/** What the model knows of a tool it was bound with. */
export interface BoundTool {
  name: string;
  description: string;
}

/** A planned tool call. */
interface Call {
  name: string;
  args: Record<string, unknown>;
}

const EMAIL = /[\w.+-]+@[\w-]+\.[\w.]+/;
const ORDER_NUMBER = /\b(ORD-)?(\d{6})\b/i;
const AMOUNT = /\$(\d+(?:\.\d{1,2})?)/;
/** Most tool-calling steps the model takes for one user message. */
const MAX_STEPS = 3;

let callCounter = 0;

/**
 * A chat model with fixed habits (see the module comment). `bindTools` returns a new model that
 * knows the names and descriptions it was bound with; the replies depend on nothing else.
 */
export class ScriptedSupportModel extends BaseChatModel {
  readonly bound: readonly BoundTool[];

  constructor(bound: readonly BoundTool[] = [], params: BaseChatModelParams = {}) {
    super(params);
    this.bound = bound;
  }

  _llmType(): string {
    return "scripted-support";
  }

  override bindTools(tools: BindToolsInput[]): ScriptedSupportModel {
    return new ScriptedSupportModel(tools.map(boundTool).filter((t): t is BoundTool => t !== undefined));
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const system = messages[0]?.getType() === "system" ? textOf(messages[0]) : "";
    const sections = toolSections(system);
    const views = this.bound.map((t) => [t.name, [t.description, sections.get(t.name)].filter(Boolean).join("\n")]);
    const refusal = ruleRefusal(messages, system);
    const message = refusal ?? reply(messages, new Map(views as [string, string][]));
    const text = typeof message.content === "string" ? message.content : "";
    return { generations: [{ text, message }] };
  }
}

/** The lessons block's section of each tool (`### \`name\`` up to the next heading). */
function toolSections(system: string): Map<string, string> {
  const sections = new Map<string, string>();
  for (const match of system.matchAll(/^### `([\w.-]+)`\n([\s\S]*?)(?=^#{2,3} |(?![\s\S]))/gm)) {
    sections.set(match[1], match[2].trim());
  }
  return sections;
}

/** A refusal when the newest request asks to email someone a pinned critical rule says never to email. */
function ruleRefusal(messages: readonly BaseMessage[], system: string): AIMessage | undefined {
  const last = messages[messages.length - 1];
  if (!last || last.getType() !== "human") return undefined;
  const request = textOf(last);
  if (!/\b(?:email|send|write)\b/i.test(request) || /\bnever\b/i.test(request)) return undefined;
  const to = EMAIL.exec(request)?.[0];
  const named = to ? (/^[a-z]+/i.exec(to)?.[0] ?? "") : "";
  for (const line of system.split("\n")) {
    const rule = /^- \[critical\].*?\bnever (?:e-?mail|send (?:an )?e-?mail to)\s+(\p{L}+)/iu.exec(line);
    if (!rule) continue;
    const who = rule[1].toLowerCase();
    if (named.toLowerCase() === who || new RegExp(`\\b${who}\\b`, "i").test(request)) {
      return answer(`I won't email ${rule[1]}: a rule you gave says never to.`);
    }
  }
  return undefined;
}

function boundTool(input: BindToolsInput): BoundTool | undefined {
  if (typeof input !== "object" || input === null) return undefined;
  const named = input as { name?: unknown; description?: unknown };
  if (typeof named.name !== "string") return undefined;
  return { name: named.name, description: typeof named.description === "string" ? named.description : "" };
}

function reply(messages: BaseMessage[], tools: ReadonlyMap<string, string>): AIMessage {
  let human = messages.length - 1;
  while (human >= 0 && messages[human].getType() !== "human") human -= 1;
  const request = human >= 0 ? textOf(messages[human]) : "";
  const since = messages.slice(human + 1);
  const steps = since.filter((m) => m.getType() === "ai").length;
  const last = since[since.length - 1];

  if (last instanceof ToolMessage) {
    if (last.status !== "error") return answer(`${textOf(last)}`);
    const failed = callOf(since, last.tool_call_id);
    const retry = failed ? repair(failed, textOf(last)) : undefined;
    if (retry && steps < MAX_STEPS && tools.has(retry.name)) return callTool(retry);
    return answer("Sorry, that did not work.");
  }
  if (/^(?:thanks|thank you)\b[^?]*$/i.test(request.trim())) return answer("You're welcome.");
  if (/\bnever\b/i.test(request)) return answer("Noted.");
  const refundWithoutOrder = /refund|money back/i.test(request) && !ORDER_NUMBER.test(request) && !EMAIL.test(request);
  if (refundWithoutOrder && tools.has("refund_order")) {
    return answer("I can refund that: which order is it, and how much?");
  }
  const planned = understand(request, tools, messages.slice(0, Math.max(0, human)));
  if (!planned) return answer("Sorry, I have no tool for that here.");
  return callTool(planned);
}

/**
 * What the model makes of a request, given the tools (and their descriptions) it can see and
 * the thread so far.
 */
function understand(
  request: string,
  tools: ReadonlyMap<string, string>,
  earlier: readonly BaseMessage[],
): Call | undefined {
  const text = request.toLowerCase();
  const order = ORDER_NUMBER.exec(request);
  const email = EMAIL.exec(request)?.[0];
  const orderId = (name: string): string | undefined => {
    if (!order) return undefined;
    // The habit: copy the number as typed, unless this tool's description shows the format.
    const prefixed = order[1] !== undefined || /ORD-#/.test(tools.get(name) ?? "");
    return prefixed ? `ORD-${order[2]}` : order[2];
  };
  const pick = (name: string, args: Record<string, unknown>): Call | undefined =>
    tools.has(name) ? { name, args } : undefined;

  if (/refund|money back/.test(text) && order) {
    const typed = AMOUNT.exec(request)?.[1] ?? "0";
    const asNumber = /amount[^.;]*<number>/.test(tools.get("refund_order") ?? "");
    return pick("refund_order", { order_id: orderId("refund_order"), amount: asNumber ? Number(typed) : typed });
  }
  if (/track|parcel|shipment/.test(text) && order)
    return pick("track_shipment", { order_id: orderId("track_shipment") });
  if (order) return pick("lookup_order", { order_id: orderId("lookup_order") });
  if (/password/.test(text) && email) return pick("reset_password", { email });
  if (/\b(email|send|write)\b/.test(text) && email) {
    return pick("send_email", { to: email, subject: "Your refund", body: "Your refund has been processed." });
  }
  if (/account/.test(text) && email) return pick("get_account", { email });
  // Asked again for the runbook: search it for what the thread was already looking for.
  if (/runbook|internal|on-call/.test(text)) {
    return pick("search_internal_runbooks", { query: previousQuery(earlier) ?? searchQuery(request) });
  }
  if (/\bhow (do|can|to)\b|\bdocs?\b/.test(text)) {
    const query = searchQuery(request);
    const steer = steeredAway(tools.get("search_public_docs"), text);
    if (tools.has("search_public_docs") && steer === undefined) return pick("search_public_docs", { query });
    return pick(steer ?? "search_internal_runbooks", { query });
  }
  return undefined;
}

/**
 * A search query the way models write one: the task of a "how do I …" question, without the
 * question frame, the articles and the place it applies to ("rotate the signing keys on the
 * payments cluster?" → "rotate signing keys").
 */
function searchQuery(request: string): string {
  const task = /\bhow (?:do|can) i\s+(.+?)(?:\s+(?:on|in|for|at)\s|[?.!]|$)/i.exec(request)?.[1] ?? request;
  return task
    .split(/\s+/)
    .filter((w) => !/^(the|a|an|my|our)$/i.test(w))
    .join(" ");
}

/** The query of the thread's latest search, if any. */
function previousQuery(earlier: readonly BaseMessage[]): string | undefined {
  for (let i = earlier.length - 1; i >= 0; i -= 1) {
    const message = earlier[i];
    if (!(message instanceof AIMessage)) continue;
    const search = message.tool_calls?.find((c) => c.name.startsWith("search_") && typeof c.args.query === "string");
    if (search) return String(search.args.query);
  }
  return undefined;
}

/**
 * The tool a "Not for <words> requests; use <tool>." line of a description sends this request
 * to: the model reads the line as covering requests that share a word with it.
 */
function steeredAway(description: string | undefined, text: string): string | undefined {
  const said = new Set(text.match(/[a-z]+/g) ?? []);
  for (const match of (description ?? "").matchAll(/Not for (.+?) requests; use ([\w-]+(?:\.[\w-]+)*)/g)) {
    const words = match[1].toLowerCase().match(/[a-z]+/g) ?? [];
    if (words.some((w) => w.length > 2 && said.has(w))) return match[2];
  }
  return undefined;
}

/** Fix a refused call the way a model does after reading the error. */
function repair(call: Call, error: string): Call | undefined {
  const args = { ...call.args };
  let changed = false;
  if (/must start with "?ORD-/.test(error) && typeof args.order_id === "string" && !args.order_id.startsWith("ORD-")) {
    args.order_id = `ORD-${args.order_id}`;
    changed = true;
  }
  if (/expected number/i.test(error) && typeof args.amount === "string") {
    args.amount = Number(args.amount);
    changed = true;
  }
  return changed ? { name: call.name, args } : undefined;
}

function callOf(messages: readonly BaseMessage[], id: string): Call | undefined {
  for (const message of messages) {
    if (!(message instanceof AIMessage)) continue;
    const found = message.tool_calls?.find((c) => c.id === id);
    if (found) return { name: found.name, args: found.args };
  }
  return undefined;
}

function callTool(call: Call): AIMessage {
  callCounter += 1;
  return new AIMessage({
    content: "",
    tool_calls: [{ id: `call_${callCounter}`, name: call.name, args: call.args, type: "tool_call" }],
  });
}

function answer(text: string): AIMessage {
  return new AIMessage({ content: text });
}

function textOf(message: BaseMessage): string {
  return typeof message.content === "string"
    ? message.content
    : message.content.map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join(" ");
}
