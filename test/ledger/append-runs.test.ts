import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemoryStore, type Operation } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";
import { appendRunsSuite } from "../helpers/append-runs.js";

describe("appendRuns on SQLite: a run's calls and turn in one transaction", () => {
  appendRunsSuite(async () => {
    const dir = mkdtempSync(join(tmpdir(), "tl-append-runs-"));
    const store = await SqliteStore.open(join(dir, "ledger.db"));
    const ledger = new Ledger(store, { failureSink: () => undefined });
    return {
      ledger,
      async refuse(collection) {
        // Namespaces are labels joined by U+001F: a turn's ends in "turns", a call's has "calls" before the tool.
        const test =
          collection === "turns"
            ? "NEW.namespace LIKE '%' || char(31) || 'turns'"
            : "instr(NEW.namespace, char(31) || 'calls' || char(31)) > 0";
        store.db.exec(
          `CREATE TRIGGER refuse BEFORE INSERT ON store WHEN ${test} BEGIN SELECT RAISE(ABORT, 'refused'); END`,
        );
      },
      async allow() {
        store.db.exec("DROP TRIGGER IF EXISTS refuse");
      },
      async cleanup() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });
});

/** An InMemoryStore whose batches fail while they hold a turn (as a store refusing it would). */
class TurnRefusingStore extends InMemoryStore {
  refusing = true;
  override async batch<Op extends readonly Operation[]>(operations: Op) {
    if (this.refusing && operations.some((op) => "namespace" in op && op.namespace.includes("turns"))) {
      throw new Error("the store refused a turn");
    }
    return super.batch(operations);
  }
}

describe("appendRuns on InMemoryStore", () => {
  it("writes a run's calls and turn in one batch: a refused turn leaves none of the run's calls", async () => {
    const store = new TurnRefusingStore();
    const ledger = new Ledger(store, { failureSink: () => undefined });
    const run = {
      calls: [
        {
          partition: "p",
          tool: "t",
          runId: "r",
          args: [],
          fingerprints: [],
          outcome: "success" as const,
          source: "api" as const,
        },
      ],
      turn: { partition: "p", requestId: "q", request: "[text]", calls: [{ tool: "t", outcome: "success" as const }] },
    };
    await expect(ledger.appendRuns([run])).rejects.toThrow(/refused a turn/);
    expect(await ledger.listCalls("p")).toHaveLength(0);
    store.refusing = false;
    await ledger.appendRuns([run]);
    expect(await ledger.listCalls("p")).toHaveLength(1);
    expect(await ledger.listTurns("p")).toHaveLength(1);
  });
});
