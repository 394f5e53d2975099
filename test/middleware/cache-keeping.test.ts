/**
 * Cache-keeping mode through `createAgent` + `toolLessonsMiddleware({ cacheKeeping: true })`: the
 * tools of a thread only grow, in a stable order, each as first described, across turns whose
 * routed sets differ; `search_tools` (the middleware's own tool) adds what it finds.
 */
import { HumanMessage } from "@langchain/core/messages";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { supportDeskTools } from "../../examples/support-desk.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { toolLessonsMiddleware } from "../../src/middleware/index.js";
import { SEARCH_TOOLS_NAME } from "../../src/serve/tool-set.js";
import { type CallView, DESK_THREAD, deskScript, SeekingModel } from "../../fixtures/seeking-model.js";
import { EMAIL_ASK, expectNarrowed, expectOnlyGrew, expectSearchAdded } from "../helpers/cache-keeping.js";

function deskAgent(cacheKeeping: boolean, extra: typeof DESK_THREAD = []) {
  const views: CallView[] = [];
  const failures: string[] = [];
  const ledger = new Ledger(new InMemoryStore());
  const agent = createAgent({
    model: new SeekingModel(deskScript(extra), views),
    tools: supportDeskTools(),
    checkpointer: new MemorySaver(),
    middleware: [
      toolLessonsMiddleware({ ledger, maxTools: 1, cacheKeeping, failureSink: (f) => failures.push(f.kind) }),
    ],
  });
  return { agent, ledger, views, failures };
}

const config = (thread: string) => ({ configurable: { thread_id: thread }, context: { user_id: "erin" } });

describe("toolLessonsMiddleware with cacheKeeping", () => {
  it("never loses or reorders a bound tool across turns whose routed sets differ", async () => {
    const { agent, ledger, views, failures } = deskAgent(true);
    let state: { keptTools?: { name: string }[] } = {};
    for (const { request } of DESK_THREAD) {
      state = await agent.invoke({ messages: [new HumanMessage(request)] }, config("mw-keep-1"));
    }
    expect(failures).toEqual([]);
    const last = expectOnlyGrew(await ledger.listRoutes("u:erin"), views);
    expect(state.keptTools?.map((t) => t.name)).toEqual(last.slice(1));
  });

  it("narrows instead without it: the same thread's tool list changes from call to call", async () => {
    const { agent, views } = deskAgent(false);
    for (const { request } of DESK_THREAD) {
      await agent.invoke({ messages: [new HumanMessage(request)] }, config("mw-narrow-1"));
    }
    expectNarrowed(views);
  });

  it("adds the tools search_tools finds to the thread's set, for the next model call", async () => {
    const { agent, views } = deskAgent(true, [EMAIL_ASK]);
    await agent.invoke({ messages: [new HumanMessage(DESK_THREAD[0].request)] }, config("mw-search-1"));
    views.length = 0;
    const state = await agent.invoke({ messages: [new HumanMessage(EMAIL_ASK.request)] }, config("mw-search-1"));
    expect(expectSearchAdded(views, state.messages).map((m) => m.name)).toEqual([SEARCH_TOOLS_NAME, "send_email"]);
    expect(state.keptTools.map((t) => t.name)).toContain("send_email");
  });
});
