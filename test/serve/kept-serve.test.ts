/**
 * Serving a kept thread (`ServeInput.kept`, cache-keeping mode): the thread's tools go first in
 * their kept order, routing's additions after them; the block covers every tool sent and leaves out
 * the per-request retrieved rules, so it is the same bytes from one request to the next. And a
 * cache-keeping `createAgent` turn over an index that hangs finishes within the bound.
 */
import { HumanMessage } from "@langchain/core/messages";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { supportDeskTools } from "../../examples/support-desk.js";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { toolLessonsMiddleware } from "../../src/middleware/index.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { putRule } from "../../src/rules/store.js";
import { TurnServer } from "../../src/serve/turn-server.js";
import { type CallView, DESK_THREAD, deskScript, SeekingModel } from "../../fixtures/seeking-model.js";

const config = (thread: string) => ({ configurable: { thread_id: thread, user_id: "ann" } });

describe("TurnServer.serve with the thread's kept tools", () => {
  it("sends the kept tools first, in order, and renders the same block for different requests", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const tools = supportDeskTools();
    const server = new TurnServer({ ledger, maxTools: 1, captureEdicts: false });
    await putRule(
      ledger,
      { tool: "send_email", rule: "Never email Dana.", priority: "critical", source: "user_explicit" },
      { partition: "u:ann" },
    );
    await putRule(
      ledger,
      { tool: "lookup_order", rule: "Say the order's status first.", priority: "normal", source: "user_explicit" },
      { partition: "u:ann" },
    );
    const kept = ["send_email", "lookup_order"];
    const ask = (text: string, withKept: boolean) =>
      server.serve({ messages: [new HumanMessage(text)], tools, ...(withKept ? { kept } : {}) }, config("k-1"));

    const refund = await ask("Please refund 5 on order ORD-482913.", true);
    expect(refund.tools?.slice(0, 2)).toEqual(kept);
    expect(refund.tools).toContain("refund_order");
    expect(refund.block.text).toContain("[critical] Never email Dana.");
    expect(refund.retrieved).toEqual([]);
    const status = await ask("What is the status of order ORD-482913?", true);
    expect(status.tools?.slice(0, 2)).toEqual(kept);
    expect(status.retrieved).toEqual([]);
    // Different requests, the same rules of the same tools: the same bytes.
    expect(status.block.text).toBe(refund.block.text);
    // Without kept tools the normal rule is retrieved for the request that needs it.
    const narrowed = await ask("What is the status of order ORD-482913?", false);
    expect(narrowed.retrieved.map((r) => r.rule)).toContain("Say the order's status first.");
  });
});

describe("a cache-keeping createAgent turn over an index that hangs", () => {
  it("finishes within the bound with every tool, and the sink hears it", async () => {
    class HangingIndex extends ToolIndex {
      override async embedQuery(): Promise<never> {
        return new Promise<never>(() => undefined);
      }
    }
    const ledger = new Ledger(new InMemoryStore());
    const failures: ToolLessonsFailure[] = [];
    const views: CallView[] = [];
    const agent = createAgent({
      model: new SeekingModel(deskScript(), views),
      tools: supportDeskTools(),
      checkpointer: new MemorySaver(),
      middleware: [
        toolLessonsMiddleware({
          ledger,
          index: new HangingIndex({ ledger }),
          cacheKeeping: true,
          timeoutMs: 150,
          failureSink: (f) => failures.push(f),
        }),
      ],
    });
    const t0 = performance.now();
    const state = await agent.invoke(
      { messages: [new HumanMessage(DESK_THREAD[1].request)] },
      { configurable: { thread_id: "hang-keep" }, context: { user_id: "ann" } },
    );
    const ms = performance.now() - t0;
    // Serving's bound once per request, plus slack for this loaded machine; the scripted model is instant.
    expect(ms).toBeLessThan(150 + 1_500);
    expect(views[0].tools).toHaveLength(9);
    expect(state.keptTools).toHaveLength(8);
    expect(failures.map((f) => f.kind)).toContain("routing_timeout");
  });
});
