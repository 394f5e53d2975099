import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { InvalidInput } from "../../src/errors.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { LessonManager } from "../../src/learn/manager.js";
import { ToolIndex } from "../../src/routing/tool-index.js";

function manager(): LessonManager {
  const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
  return new LessonManager({ ledger, index: new ToolIndex({ ledger }) });
}

/** Call a method with inputs its types forbid, as a script or a web handler might. */
type Loose = Record<string, (...args: unknown[]) => Promise<unknown>>;

async function refusal(call: Promise<unknown>): Promise<InvalidInput> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidInput);
  return error as InvalidInput;
}

describe("LessonManager refuses malformed inputs with InvalidInput naming the field", () => {
  it("the two of issue 29: apply({ id }) and approvedBy: 7", async () => {
    const m = manager() as unknown as Loose;
    const a = await refusal(m.apply!({ id: "rev-1" }));
    expect(a.context).toMatchObject({ method: "apply", field: "id" });
    expect(a.message).toMatch(/LessonManager\.apply\(\): id /);
    const b = await refusal(m.undo!("send_email", { approvedBy: 7 }));
    expect(b.context).toMatchObject({ method: "undo", field: "options.approvedBy" });
    const c = await refusal(m.apply!("rev-1", { approvedBy: 7 }));
    expect(c.context.field).toBe("options.approvedBy");
  });

  it("every public method but review checks its inputs before reading a store", async () => {
    const m = manager() as unknown as Loose;
    const cases: [string, unknown[], string][] = [
      ["apply", ["rev-1"], "options"],
      ["apply", ["rev-1", { approvedBy: "  " }], "options.approvedBy"],
      ["apply", ["rev-1", { approvedBy: "ops", partition: 3 }], "options.partition"],
      ["dismiss", [null], "id"],
      ["dismiss", ["rev-1", { by: ["ops"] }], "options.by"],
      ["undo", ["", { approvedBy: "ops" }], "tool"],
      ["undo", ["send_email", {}], "options.approvedBy"],
      ["history", [{ tool: "x" }], "tool"],
      ["configure", ["minCalls=3"], "settings"],
      ["flags", [{ config: 5 }], "options.config"],
      [
        "putRule",
        [{ tool: "send_email", rule: "Never email Sarah.", priority: "urgent", source: "programmatic" }],
        "input.priority",
      ],
      ["putRule", [{ tool: "send_email", rule: 7, priority: "high", source: "programmatic" }], "input.rule"],
      [
        "putRule",
        [{ tool: "send_email", rule: "x", priority: "high", source: "programmatic" }, { scope: "global" }],
        "options.scope",
      ],
      ["getRule", [42], "id"],
      ["deleteRule", ["r", { partition: "" }], "options.partition"],
      ["listRules", [{ scope: "everything" }], "options.scope"],
      ["rulesForPrompt", ["send_email"], "tools"],
      ["rulesForPrompt", [["send_email"], { maxRules: 0 }], "options.maxRules"],
      ["rulesJson", [{ partition: {} }], "options.partition"],
      ["promoteRule", ["r", { by: 7 }], "options.by"],
      ["evaluateCalls", [{ tools: "send_email" }], "options.tools"],
      ["summarize", ["send_email"], "tools"],
      ["summarize", [undefined, { force: "yes" }], "options.force"],
      ["stats", [undefined], "tool"],
      ["memoryFor", ["send_email", { config: [] }], "options.config"],
      ["memoryBlock", [[1, 2]], "tools.0"],
    ];
    for (const [method, args, field] of cases) {
      const error = await refusal(m[method]!(...args));
      expect(error.context, `${method}(${JSON.stringify(args)})`).toMatchObject({ method, field });
    }
  });

  it("well-formed inputs still reach the store (and its own typed errors)", async () => {
    const m = manager();
    await expect(m.listRules({ scope: "all" })).resolves.toEqual([]);
    await expect(m.apply("rev-1", { approvedBy: "ops" })).rejects.toMatchObject({ name: "NotFound" });
  });
});
