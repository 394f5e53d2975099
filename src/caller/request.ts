import { createHash } from "node:crypto";
import { isRecord } from "../internal.js";

/**
 * The request a run serves: the newest human message of its messages. Pure, so the recorder
 * (callbacks), the turn server and the graph's nodes compute the same request id from the same
 * state and route records join turn records. With the caller's partition in `src/caller/`: what a
 * run is (whose, and which request), which every stage reads and none owns.
 *
 * Accepts every form LangChain accepts for a message: `BaseMessage` instances, plain
 * `{ role: "user" | "human", content }` or `{ type: "human", content }` objects, `["user", text]`
 * tuples, bare strings (a human message), and serialized messages (`{ lc, id: [..,
 * "HumanMessage"], kwargs }`).
 */

/** The newest human message of a conversation. */
export interface HumanTurn {
  /** Its text (text parts of multi-part content joined by a space). */
  text: string;
  /** Its position in the messages it was found in. */
  index: number;
  /** The message id, when set (LangGraph's `messagesStateReducer` gives every message one). */
  id?: string;
}

const HUMAN_TYPES: ReadonlySet<string> = new Set(["human", "user", "humanmessage", "humanmessagechunk"]);

/** The message list of a run input or state: `{ messages }`, a list, or one message. */
export function messagesOf(input: unknown): unknown[] | undefined {
  if (Array.isArray(input)) return input;
  if (isRecord(input) && Array.isArray(input.messages)) return input.messages;
  return undefined;
}

/** The role of a message, lower case (`human`, `ai`, `tool`, `system`…), if recognisable. */
export function messageRole(message: unknown): string | undefined {
  if (typeof message === "string") return "human";
  if (Array.isArray(message)) return typeof message[0] === "string" ? message[0].toLowerCase() : undefined;
  if (!isRecord(message)) return undefined;
  for (const method of ["getType", "_getType"] as const) {
    const fn = message[method];
    if (typeof fn === "function") {
      const type: unknown = fn.call(message);
      if (typeof type === "string") return type.toLowerCase();
    }
  }
  if (message.lc !== undefined && Array.isArray(message.id)) {
    const last = message.id[message.id.length - 1];
    return typeof last === "string" ? last.toLowerCase() : undefined;
  }
  if (typeof message.role === "string") return message.role.toLowerCase();
  if (typeof message.type === "string") return message.type.toLowerCase();
  return undefined;
}

function body(message: unknown): Record<string, unknown> | undefined {
  if (!isRecord(message) || Array.isArray(message)) return undefined;
  return message.lc !== undefined && isRecord(message.kwargs) ? message.kwargs : message;
}

/** The text of a message's content: a string, or the text parts of a content array. */
export function messageText(message: unknown): string {
  if (typeof message === "string") return message;
  if (Array.isArray(message)) return contentText(message[1]);
  return contentText(body(message)?.content);
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => {
      if (typeof part === "string") return part;
      if (isRecord(part) && typeof part.text === "string") return part.text;
      return "";
    })
    .filter((t) => t !== "")
    .join(" ");
}

/** The id of a message, when it has a non-empty one. */
export function messageId(message: unknown): string | undefined {
  const id = body(message)?.id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** The newest human message of `messages`, or `undefined` when there is none. */
export function latestHumanTurn(messages: readonly unknown[]): HumanTurn | undefined {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    const role = messageRole(message);
    if (role === undefined || !HUMAN_TYPES.has(role)) continue;
    const id = messageId(message);
    return { text: messageText(message), index, ...(id !== undefined ? { id } : {}) };
  }
  return undefined;
}

/**
 * The id of the request `messages` end in: the newest human message's own `id` when it has one,
 * else `"r_"` + 16 hex chars of SHA-256 over thread id, the message's index and its text.
 * Deterministic: the same thread and messages always give the same id. `undefined` when there
 * is no human message.
 */
export function requestIdFor(threadId: string | undefined, messages: readonly unknown[]): string | undefined {
  const turn = latestHumanTurn(messages);
  if (turn === undefined) return undefined;
  return turn.id ?? hashedRequestId(threadId, turn);
}

/** The fallback id of a turn without a message id. */
export function hashedRequestId(threadId: string | undefined, turn: Pick<HumanTurn, "index" | "text">): string {
  const digest = createHash("sha256")
    .update(`${threadId ?? ""}\u0000${turn.index}\u0000${turn.text}`)
    .digest("hex");
  return `r_${digest.slice(0, 16)}`;
}

/** Tools the thread has already called (kept visible on later turns). */
export function toolsInUse(messages: readonly unknown[]): string[] {
  const names = new Set<string>();
  for (const message of messages) {
    if (messageRole(message) !== "ai") continue;
    const calls = (message as { tool_calls?: { name?: unknown }[] }).tool_calls ?? [];
    for (const call of calls) if (typeof call.name === "string") names.add(call.name);
  }
  return [...names];
}
