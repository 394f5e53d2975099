/**
 * Where the lessons block goes in what the model sees: after the app's own system prompt, in one
 * system message (many providers take one, and only first). Pure.
 */
import { SystemMessage } from "@langchain/core/messages";

/**
 * The app's system message with the lessons block appended (a blank line between); the block
 * alone when the app has none; the app's own, unchanged, when the block is empty.
 */
export function withLessonsBlock(system: SystemMessage | string | undefined, block: string): SystemMessage | undefined {
  const own = typeof system === "string" ? (system === "" ? undefined : new SystemMessage(system)) : system;
  const added = block.trimEnd();
  if (added === "") return own;
  if (own === undefined || own.text === "") return new SystemMessage(added);
  return own.concat(`\n\n${added}`);
}
