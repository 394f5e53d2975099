import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BaseStore, InMemoryStore, type Item, type Operation, type OperationResults } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { InvalidInput } from "../../src/errors.js";
import { ruleId } from "../../src/ledger/collections/rules.js";
import { DEFAULT_NAMESPACE_ROOT, encodeLabel } from "../../src/ledger/keys.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function sqlite(): Promise<BaseStore> {
  const dir = mkdtempSync(join(tmpdir(), "tl-rules-"));
  dirs.push(dir);
  return SqliteStore.open(join(dir, "ledger.db"));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The store with every call delayed 0–3 ms at random: concurrent upserts interleave across milliseconds. */
function slow(store: BaseStore): BaseStore {
  const batch = store.batch.bind(store);
  store.batch = (async (operations: Operation[]) => {
    await sleep(Math.random() * 3);
    return batch(operations);
  }) as BaseStore["batch"];
  return store;
}
const base = { priority: "critical", source: "user_explicit" } as const;

describe("ruleId", () => {
  it("is `rule-` and 16 consonants: no digit that could pass for data", () => {
    for (const [tool, text] of [
      ["send_email", "Never email Sarah."],
      ["refund_order", "Never refund over 500 dollars to ORD-123456."],
      ["*", "Stop cc'ing my boss."],
    ]) {
      expect(ruleId(tool, text)).toMatch(/^rule-[bcdfghjklmnpqrst]{16}$/);
    }
  });

  it("is the same for the same rule however it is cased, spaced or closed, and differs by tool or text", () => {
    const id = ruleId("send_email", "Never email Sarah.");
    expect(ruleId("send_email", "never   email sarah")).toBe(id);
    expect(ruleId("send_email", "NEVER EMAIL SARAH!")).toBe(id);
    expect(ruleId("send_email", "Never email Sarah.\u00a0")).toBe(id);
    expect(ruleId("exec_command", "Never email Sarah.")).not.toBe(id);
    expect(ruleId("send_email", "Never email Sam.")).not.toBe(id);
  });
});

for (const [name, open] of [
  ["InMemoryStore", async () => new InMemoryStore() as BaseStore],
  ["SqliteStore", sqlite],
] as const) {
  describe(`rules in the ledger (${name})`, () => {
    it("upserts one row per rule without an id: the second put keeps createdAt and moves updatedAt", async () => {
      const ledger = new Ledger(await open());
      const first = await ledger.putRule("p", { ...base, tool: "send_email", rule: "Never email Sarah." });
      expect(first.id).toBe(ruleId("send_email", "Never email Sarah."));
      expect(first.createdAt).toBe(first.updatedAt);
      await sleep(5);
      const again = await ledger.putRule("p", { ...base, tool: "send_email", rule: "never email sarah" });
      expect(again.id).toBe(first.id);
      expect(again.createdAt).toBe(first.createdAt);
      expect(again.updatedAt).toBeGreaterThan(first.updatedAt);
      expect(await ledger.listRules("p")).toEqual([again]);
    });

    it("takes createdAt and updatedAt from the store's own row times", async () => {
      const store = await open();
      const ledger = new Ledger(store);
      const rule = await ledger.putRule("p", { ...base, tool: "search", rule: "Never search for people." });
      const item = await store.get([DEFAULT_NAMESPACE_ROOT, encodeLabel("p"), "rules"], rule.id);
      expect(rule.createdAt).toBe(new Date(item!.createdAt).getTime());
      expect(rule.updatedAt).toBe(new Date(item!.updatedAt).getTime());
    });

    it("keeps createdAt when two ledgers upsert the same rule many times at once, each call delayed at random", async () => {
      const store = slow(await open());
      const [a, b] = [new Ledger(store), new Ledger(store)];
      const input = { ...base, tool: "send_email", rule: "Never email Sarah." };
      // Started a little apart too, so the upserts that race read "no row" at different times.
      const results = await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          await sleep(Math.random() * 4);
          return (i % 2 === 0 ? a : b).putRule("p", input);
        }),
      );
      const stored = await a.listRules("p");
      expect(stored).toHaveLength(1);
      for (const r of results) expect(r.createdAt).toBe(stored[0].createdAt);
    });

    it("lists by priority, then the most recently updated first", async () => {
      const ledger = new Ledger(await open());
      const put = (rule: string, priority: "critical" | "high" | "normal") =>
        ledger.putRule("p", { tool: "search", rule, priority, source: "programmatic" });
      await put("normal old", "normal");
      await sleep(3);
      await put("high old", "high");
      await sleep(3);
      await put("critical old", "critical");
      await sleep(3);
      await put("normal new", "normal");
      await sleep(3);
      await put("high new", "high");
      await sleep(3);
      await put("critical new", "critical");
      expect((await ledger.listRules("p")).map((r) => r.rule)).toEqual([
        "critical new",
        "critical old",
        "high new",
        "high old",
        "normal new",
        "normal old",
      ]);
    });

    it("moves a rule to another partition under the same id, in one batch, with the changes given", async () => {
      const ledger = new Ledger(await open());
      const rule = await ledger.putRule("u:1", {
        ...base,
        tool: "send_email",
        rule: "Never email Sarah.",
        tags: ["edict"],
      });
      const moved = await ledger.moveRule("u:1", rule.id, "~shared", { promotedBy: "ops" });
      expect(moved).toMatchObject({ id: rule.id, partition: "~shared", promotedBy: "ops", tags: ["edict"] });
      expect(await ledger.getRule("u:1", rule.id)).toBeNull();
      expect(await ledger.listRules("~shared")).toEqual([moved]);
      expect(await ledger.moveRule("u:1", rule.id, "~shared")).toBeNull();
      await expect(ledger.moveRule("~shared", rule.id, "~shared")).rejects.toBeInstanceOf(InvalidInput);
    });
  });
}

/** A store that reports no row times (as a custom `BaseStore` might). */
class TimelessStore extends InMemoryStore {
  override async batch<Op extends readonly Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results = (await super.batch(operations)) as unknown[];
    const strip = (item: Item) => ({ ...item, createdAt: undefined, updatedAt: undefined }) as unknown as Item;
    return results.map((r) =>
      Array.isArray(r)
        ? r.map((x) => (x && typeof x === "object" && "key" in x ? strip(x as Item) : x))
        : r && typeof r === "object" && "key" in r
          ? strip(r as Item)
          : r,
    ) as OperationResults<Op>;
  }
}

describe("rules in a store that reports no row times", () => {
  it("falls back to the times the ledger wrote, and still keeps createdAt", async () => {
    const ledger = new Ledger(new TimelessStore());
    const first = await ledger.putRule("p", { ...base, tool: "send_email", rule: "Never email Sarah." });
    expect(Number.isFinite(first.createdAt)).toBe(true);
    await sleep(5);
    const again = await ledger.putRule("p", { ...base, tool: "send_email", rule: "Never email Sarah." });
    expect(again.createdAt).toBe(first.createdAt);
    expect(again.updatedAt).toBeGreaterThan(first.updatedAt);
  });
});
