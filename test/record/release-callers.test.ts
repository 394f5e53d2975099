import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { InMemoryStore } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Ledger } from "../../src/ledger/ledger.js";
import { resolveThreadCaller, ThreadCallers } from "../../src/caller/thread-callers.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { callerIdOf } from "../../src/caller/partition.js";

/**
 * Word releases tell the callers of a shared partition apart by the caller the recorder resolved
 * (read the one way: metadata, configurable, context), never by the raw `metadata.user_id`. A
 * template `t:{tenant_id}` puts every user of a tenant in one partition, so a word one user's
 * threads show must stay a token, however many, until three distinct callers showed it.
 */

const TEMPLATE = "t:{tenant_id}";
const PARTITION = "t:acme";
const NAME = "Quenby";

const lookup = tool(
  async ({ holder }: { holder: string }) => {
    if (holder === "nobody") return "no holder asked";
    throw new Error(`Account holder ${NAME} has no such record`);
  },
  { name: "lookup_account", description: "Look up an account.", schema: z.object({ holder: z.string() }) },
);

/** One run of a recorder-only agent: one call of lookup_account, failing with the name unless `quiet`. */
async function run(handler: ToolLessonsCallbackHandler, thread_id: string, config: object, quiet = false) {
  const llm = fakeModel()
    .respondWithTools([{ name: "lookup_account", args: { holder: quiet ? "nobody" : "h-1" }, id: "call-1" }])
    .respond(new AIMessage("done"));
  await createReactAgent({ llm, tools: [lookup] }).invoke(
    { messages: [new HumanMessage("Check the account please")] },
    {
      ...config,
      configurable: { thread_id, ...("configurable" in config ? (config.configurable as object) : {}) },
      callbacks: [handler],
    },
  );
  await handler.flush();
}

function recorder(callers?: ThreadCallers, partition = TEMPLATE) {
  const ledger = new Ledger(new InMemoryStore(), { failureSink: () => undefined });
  const handler = new ToolLessonsCallbackHandler({
    ledger,
    partition,
    failureSink: () => undefined,
    ...(callers ? { callers } : {}),
  });
  const errors = async (key = PARTITION) => (await ledger.listCalls(key)).map((c) => c.errorMessage).filter(Boolean);
  return { ledger, handler, errors };
}

describe("word releases in a partition several callers share", () => {
  it("tells callers apart by their resolved ids: one user id in two tenants is two callers", async () => {
    // A partition per agent, shared by the tenants: the raw user_id is "7" for both callers.
    const { handler, errors } = recorder(undefined, "a:{agent_id}");
    const as = (tenant_id: string) => ({ metadata: { agent_id: "desk", tenant_id, user_id: "7" } });
    await run(handler, "globex-1", as("globex"), true);
    await run(handler, "acme-1", as("acme"));
    await run(handler, "acme-2", as("acme"));
    await run(handler, "acme-3", as("acme"));
    expect(await errors("a:desk")).toHaveLength(3);
    expect((await errors("a:desk")).join(" ")).not.toContain(NAME);
    await run(handler, "globex-2", as("globex"));
    // Two callers ("7" of acme and "7" of globex) are not enough: three must show it.
    expect((await errors("a:desk")).join(" ")).not.toContain(NAME);
    await run(handler, "initech-1", as("initech"));
    expect(await errors("a:desk")).toEqual(Array(5).fill(`Account holder ${NAME} has no such record`));
  });

  it("takes the caller a node resolved from configurable when the metadata names no user", async () => {
    const callers = new ThreadCallers();
    const { handler, errors } = recorder(callers);
    const as = (thread_id: string, user_id: string) => {
      const config = { metadata: { tenant_id: "acme" }, configurable: { user_id } };
      // What the route node or middleware does with the run's whole config.
      resolveThreadCaller(
        { ...config, configurable: { ...config.configurable, thread_id } },
        TEMPLATE,
        thread_id,
        callers,
      );
      return config;
    };
    await run(handler, "erin-1", as("erin-1", "erin"), true);
    await run(handler, "sam-1", as("sam-1", "sam"));
    await run(handler, "sam-2", as("sam-2", "sam"));
    expect(callers.callerOf("sam-2")).toBe("t:acme/u:sam");
    expect((await errors()).join(" ")).not.toContain(NAME);
    await run(handler, "erin-2", as("erin-2", "erin"));
    expect((await errors()).join(" ")).not.toContain(NAME);
    await run(handler, "kim-1", as("kim-1", "kim"));
    expect((await errors()).join(" ")).toContain(NAME);
  });
});

describe("callerIdOf", () => {
  it("is the tenant and user read the one way, written as partition keys write ids", () => {
    expect(callerIdOf({ metadata: { user_id: 42 } })).toBe("u:42");
    expect(callerIdOf({ metadata: { user_id: "42", tenant_id: "acme" } })).toBe("t:acme/u:42");
    // The app's configurable beats the client's metadata (the trust order, issue 44 item 6).
    expect(callerIdOf({ metadata: { user_id: "a" }, configurable: { user_id: "b", tenant_id: "acme" } })).toBe(
      "t:acme/u:b",
    );
    expect(callerIdOf({ context: { user_id: "c" } })).toBe("u:c");
    expect(callerIdOf({ metadata: { tenant_id: "acme" } })).toBeUndefined();
    expect(callerIdOf({ metadata: { user_id: "" } })).toBeUndefined();
  });
});
