/**
 * What the cache-keeping tests of both adapters (the graph and the middleware) check alike: a
 * thread's bound tools only grow, in a stable order, each as first described; without the mode
 * they narrow; `search_tools` adds what it finds for the next model call.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { expect } from "vitest";
import type { RouteRecord } from "../../src/ledger/schema.js";
import { SEARCH_TOOLS_NAME } from "../../src/serve/tool-set.js";
import { type CallView, DESK_THREAD, isPrefix } from "../../fixtures/seeking-model.js";

/** A request no routed set of a one-tool thread holds: the scripted model must search for `send_email`. */
export const EMAIL_ASK = {
  request: "Tell them the mug is lovely.",
  tool: "send_email",
  args: { to: "a@b.test", subject: "Your mug", body: "Lovely." },
  query: "send an email to a customer",
};

/**
 * After {@link DESK_THREAD} in one thread: routing offered different tools turn to turn, and every
 * model call was bound with the call before it as its prefix, `search_tools` first, each tool
 * once, every tool the thread used kept. Returns the last call's tool names.
 */
export function expectOnlyGrew(routes: readonly RouteRecord[], views: readonly CallView[]): string[] {
  expect(routes).toHaveLength(DESK_THREAD.length);
  expect(new Set(routes.map((r) => r.offered[0]?.tool)).size).toBeGreaterThanOrEqual(4);
  expect(views.length).toBeGreaterThanOrEqual(2 * DESK_THREAD.length);
  for (let i = 1; i < views.length; i++) {
    expect(isPrefix(views[i - 1].tools, views[i].tools), `call ${i}`).toBe(true);
  }
  const last = views[views.length - 1].tools.map((t) => t.name);
  expect(last[0]).toBe(SEARCH_TOOLS_NAME);
  expect(new Set(last).size).toBe(last.length);
  for (const { tool } of DESK_THREAD) expect(last).toContain(tool);
  return last;
}

/** Without cache-keeping: the thread's tool list changed between calls, and no `search_tools` was sent. */
export function expectNarrowed(views: readonly CallView[]): void {
  expect(views.slice(1).filter((v, i) => !isPrefix(views[i].tools, v.tools)).length).toBeGreaterThan(0);
  expect(views.flatMap((v) => v.tools.map((t) => t.name))).not.toContain(SEARCH_TOOLS_NAME);
}

/**
 * The turn of {@link EMAIL_ASK}: its first call lacked `send_email`, its second held it after the
 * first call's tools. Returns the tool messages of the turn (after its human message).
 */
export function expectSearchAdded(views: readonly CallView[], messages: readonly BaseMessage[]): BaseMessage[] {
  expect(views[0].tools.map((t) => t.name)).not.toContain(EMAIL_ASK.tool);
  expect(views[1].tools.map((t) => t.name)).toContain(EMAIL_ASK.tool);
  expect(isPrefix(views[0].tools, views[1].tools)).toBe(true);
  const turn = messages.slice(messages.findLastIndex((m) => m.getType() === "human"));
  return turn.filter((m) => m.getType() === "tool");
}
