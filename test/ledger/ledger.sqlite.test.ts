import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemoryStore } from "@langchain/langgraph";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InvalidInput, StoreUnavailable } from "../../src/errors.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { openLedger } from "../../src/ledger/open.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";
import { card, ledgerContract } from "./contract.js";

const quiet = { failureSink: () => {} };

ledgerContract("SqliteStore (file)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tl-ledger-"));
  const store = await SqliteStore.open(join(dir, "ledger.db"));
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

function call(partition: string, tool: string, runId: string) {
  return { partition, tool, runId, args: [], fingerprints: [], outcome: "success" as const, source: "api" as const };
}

describe("SQLite ledger on disk", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "tl-ledger-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps every row across close and reopen", async () => {
    const path = join(dir, "nested", "ledger.db");
    const first = await openLedger({ path, ...quiet });
    const written = await first.appendCalls([call("p", "github.create_issue", "r1"), call("p", "search", "r2")]);
    const searchCard = await first.putCard(card("p", "search"));
    await first.configure("p", { minCalls: 7 });
    const key = await first.fingerprintKey("p");
    await first.close();
    await first.close();
    await expect(first.listCalls("p")).rejects.toBeInstanceOf(StoreUnavailable);

    const second = await openLedger({ path, ...quiet });
    expect(await second.listCalls("p")).toEqual([...written].sort((a, b) => a.id.localeCompare(b.id)));
    expect(await second.getCard("p", "search")).toEqual(searchCard);
    expect((await second.getSettings("p")).minCalls).toBe(7);
    expect(await second.fingerprintKey("p")).toBe(key);
    expect(await second.listPartitions()).toEqual(["p"]);
    await second.close();
  });

  it("loses no record when two connections to one file append at once", async () => {
    const path = join(dir, "ledger.db");
    const a = await openLedger({ path, ...quiet });
    const b = await openLedger({ path, ...quiet });
    await a.configure("p", { retainCallsPerTool: 1000 });
    await Promise.all(
      [a, b].map(async (ledger, w) => {
        for (let batch = 0; batch < 25; batch += 1) {
          await ledger.appendCalls(Array.from({ length: 10 }, (_, i) => call("p", "search", `w${w}-${batch}-${i}`)));
        }
      }),
    );
    expect(await b.listCalls("p")).toHaveLength(500);
    await Promise.all([a.close(), b.close()]);
  });
});

describe("openLedger", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "tl-open-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("opens .tool-lessons/ledger.db under the working directory by default", async () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const ledger = await openLedger({ env: {}, ...quiet });
      expect(ledger.store).toBeInstanceOf(SqliteStore);
      await ledger.appendCalls([call("p", "search", "r")]);
      await ledger.close();
      expect(existsSync(join(dir, ".tool-lessons", "ledger.db"))).toBe(true);
    } finally {
      process.chdir(cwd);
    }
  });

  it("takes the file from TOOL_LESSONS_LEDGER when no path is given", async () => {
    const path = join(dir, "from-env.db");
    const ledger = await openLedger({ env: { ledgerPath: path }, ...quiet });
    await ledger.appendCalls([call("p", "search", "r")]);
    await ledger.close();
    expect(existsSync(path)).toBe(true);
    const explicit = join(dir, "explicit.db");
    const other = await openLedger({ path: explicit, env: { ledgerPath: path }, ...quiet });
    expect(await other.listCalls("p")).toEqual([]);
    await other.close();
  });

  it("uses a given store as is and never closes it", async () => {
    const store = await SqliteStore.open(join(dir, "mine.db"));
    const ledger = await openLedger({ store, namespaceRoot: "mine", ...quiet });
    expect(ledger.store).toBe(store);
    await ledger.appendCalls([call("p", "search", "r")]);
    await ledger.close();
    expect(await new Ledger(store, { namespaceRoot: "mine" }).listCalls("p")).toHaveLength(1);
    await store.close();
  });

  it("refuses more than one of store, path and postgresUrl", async () => {
    await expect(openLedger({ store: new InMemoryStore(), path: join(dir, "x.db") })).rejects.toBeInstanceOf(
      InvalidInput,
    );
    await expect(
      openLedger({ path: join(dir, "x.db"), postgresUrl: "postgresql://localhost/x" }),
    ).rejects.toBeInstanceOf(InvalidInput);
    expect(existsSync(join(dir, "x.db"))).toBe(false);
  });

  it("reports a file it cannot open as StoreUnavailable", async () => {
    const blocker = join(dir, "file");
    const a = await openLedger({ path: blocker, ...quiet });
    await a.close();
    await expect(openLedger({ path: join(blocker, "ledger.db") })).rejects.toBeInstanceOf(StoreUnavailable);
  });
});
