import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { type BaseStore, InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";
import { ToolLessonsCallbackHandler } from "../../src/record/handler.js";
import { buildAgent, planScript, ScriptedChatModel, shopTools } from "../helpers/record-agent.js";
import { stringLeaves, tokens } from "../helpers/stored-values.js";

const PLANTED = ["sarah.connor@example.com", "ORD-918273", "4821.77", "Sarah Connor"];
/** Every piece of the planted values that would give one away. */
const FORBIDDEN = ["sarah", "connor", "example.com", "918273", "4821", "ord-918273"];

/**
 * Every row of the store, as JSON: namespaces, keys and values. The checks below read each row as
 * token sequences of its namespace, key and string leaves except the keyed fingerprints, so a hash
 * such as `8b256e4821b328ac` is one token and never matches a planted `4821` by chance.
 */
async function dumpStore(store: BaseStore): Promise<string[]> {
  const rows: string[] = [];
  const namespaces = await store.listNamespaces({ limit: 10_000 });
  expect(namespaces.length).toBeGreaterThan(0);
  for (const ns of namespaces) {
    for (const item of await store.search(ns, { limit: 10_000 })) {
      rows.push(JSON.stringify({ ns: item.namespace, key: item.key, value: item.value }));
    }
  }
  return rows;
}

async function runPlantedAgent(store: BaseStore): Promise<string[]> {
  const ledger = new Ledger(store);
  const handler = new ToolLessonsCallbackHandler({ ledger });
  const model = new ScriptedChatModel(
    planScript(
      (step) =>
        [
          [
            // A tool error that repeats the value, and a schema refusal carrying the amount as text.
            { name: "lookup_order", args: { order_id: "918273" } },
            { name: "refund", args: { order_id: "ORD-918273", amount: "4821.77" } },
          ],
          [
            { name: "lookup_order", args: { order_id: "ORD-918273" } },
            { name: "refund", args: { order_id: "ORD-918273", amount: 4821.77 } },
          ],
          [
            {
              name: "send_email",
              args: {
                to: "sarah.connor@example.com",
                subject: "Refund ORD-918273",
                body: "Dear Sarah Connor, 4821.77 is on its way.",
              },
            },
          ],
        ][step],
      { tokensPerStep: 120 },
    ),
  );
  const graph = buildAgent({ model, tools: shopTools(), checkpointer: new MemorySaver() });
  await graph.invoke(
    {
      messages: [
        new HumanMessage("I'm Sarah Connor (sarah.connor@example.com): refund 4821.77 on ORD-918273 and email me."),
      ],
    },
    { configurable: { thread_id: "thread-1" }, metadata: { user_id: "u1" }, callbacks: [handler] },
  );
  await handler.flush();
  expect(handler.stats().written).toEqual({ calls: 5, turns: 1 });
  return dumpStore(store);
}

function expectNoPlantedValue(rows: string[]): void {
  // The run's 5 calls and its turn, at least (the ledger's key is no row of the store any more).
  expect(rows.length).toBeGreaterThanOrEqual(6);
  for (const row of rows) {
    const { ns, key, value } = JSON.parse(row) as { ns: string[]; key: string; value: unknown };
    const texts = [...ns, key, ...stringLeaves(value)].map(tokens);
    for (const planted of [...PLANTED, ...FORBIDDEN]) {
      const hit = texts.find((t) => t.includes(tokens(planted)));
      expect(hit, `a stored row holds "${planted}": ${row}`).toBeUndefined();
    }
  }
}

describe("privacy: no planted argument value reaches any stored row", () => {
  it("InMemoryStore", async () => {
    const rows = await runPlantedAgent(new InMemoryStore());
    expectNoPlantedValue(rows);
    // What is kept instead: shapes, fingerprints and masked text.
    expect(rows.join("\n")).toContain("ORD-######");
    expect(rows.join("\n")).toContain("<email>");
  });

  const dir = mkdtempSync(join(tmpdir(), "tl-privacy-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("SqliteStore (every row of the file)", async () => {
    const store = await SqliteStore.open(join(dir, "ledger.db"));
    await store.setup();
    try {
      expectNoPlantedValue(await runPlantedAgent(store));
    } finally {
      await store.close();
    }
  });
});
