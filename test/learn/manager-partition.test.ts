import { tool } from "@langchain/core/tools";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { LessonManager } from "../../src/learn/manager.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";

const lookup = tool(async () => "ok", {
  name: "lookup_order",
  description: "Look up an order.",
  schema: z.object({ q: z.string() }),
});

describe("LessonManager takes the partition from config when the options name none", () => {
  it("review reads the caller's ids (here v1 context) as every piece does; options.partition wins", async () => {
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, [lookup], { partition: "u:erin" });
    const manager = new LessonManager({ ledger, index: new ToolIndex({ ledger }) });
    const fromConfig = await manager.review({ dryRun: true }, { context: { user_id: "erin" } } as never);
    expect(fromConfig.partition).toBe("u:erin");
    const explicit = await manager.review({ dryRun: true, partition: "default" }, {
      configurable: { user_id: "erin" },
    } as never);
    expect(explicit.partition).toBe("default");
    expect((await manager.review({ dryRun: true })).partition).toBe("default");
  });
});
