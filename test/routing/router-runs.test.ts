import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { CallbackManager } from "@langchain/core/callbacks/manager";
import { tool } from "@langchain/core/tools";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { ToolRouter } from "../../src/routing/router.js";
import { ToolIndex } from "../../src/routing/tool-index.js";

/** Counts the retriever runs it is told of; `ignoreRetriever` as given. */
class Counter extends BaseCallbackHandler {
  name = "counter";
  starts = 0;
  constructor(ignore: boolean) {
    super({ ignoreRetriever: ignore });
  }
  override async handleRetrieverStart(): Promise<void> {
    this.starts += 1;
  }
}

async function router() {
  const ledger = new Ledger(new InMemoryStore());
  const tools = ["reset_password", "track_shipment", "refund_order"].map((name) =>
    tool(async () => "ok", { name, description: `The ${name.replace("_", " ")} tool.`, schema: z.object({}) }),
  );
  await registerTools(ledger, tools, { partition: "p" });
  return { ledger, router: new ToolRouter({ index: new ToolIndex({ ledger }), maxTools: 2, partition: "p" }) };
}

describe("ToolRouter.route makes a retriever run only for a handler that listens to one", () => {
  it("a handler that listens sees the run; with only handlers that ignore retriever runs, none is made", async () => {
    const { ledger, router: r } = await router();
    const configure = vi.spyOn(CallbackManager, "configure");
    const listening = new Counter(false);
    const ignoring = new Counter(true);
    const routed = await r.route("track my parcel", {}, { callbacks: [ignoring, listening] });
    expect(listening.starts).toBe(1);
    expect(configure).toHaveBeenCalledTimes(1);
    const alone = await r.route("track my parcel", {}, { callbacks: [ignoring] });
    // The same choice, and no run at all: no callback manager was even configured for it.
    expect(alone.tools).toEqual(routed.tools);
    expect(configure).toHaveBeenCalledTimes(1);
    expect(ignoring.starts).toBe(0);
    configure.mockRestore();
    // The recorder is such a handler.
    expect(new ToolLessonsCallbackHandler({ ledger }).ignoreRetriever).toBe(true);
  });
});
