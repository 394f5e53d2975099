import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemoryStore } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { cardFromTool } from "../../src/ledger/cards.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { countingLessonsWrite, lessonsWrites, writtenOnlyHere } from "../../src/ledger/lessons-stamp.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";
import { lookupClaim } from "../helpers/cards.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const rule = { priority: "critical", source: "user_explicit", tool: "send_email" } as const;

describe("lessonsWrites", () => {
  it("counts this process's rule writes per store and partition: put, delete, move (both ends)", async () => {
    const store = new InMemoryStore();
    const ledger = new Ledger(store);
    const other = new Ledger(store, { namespaceRoot: "other-root" });
    expect(lessonsWrites(store, "u:alice")).toBe(0);
    const put = await ledger.putRule("u:alice", { ...rule, rule: "Never email Sarah." });
    expect(lessonsWrites(store, "u:alice")).toBe(1);
    expect(lessonsWrites(store, "u:bob")).toBe(0);
    expect(lessonsWrites(new InMemoryStore(), "u:alice")).toBe(0);
    await ledger.moveRule("u:alice", put.id, "u:carol");
    expect([lessonsWrites(store, "u:alice"), lessonsWrites(store, "u:carol")]).toEqual([2, 1]);
    expect(await ledger.deleteRule("u:carol", put.id)).toBe(true);
    expect(await ledger.deleteRule("u:carol", put.id)).toBe(false);
    expect(lessonsWrites(store, "u:carol")).toBe(2);
    // Another ledger over the same store: over-counting costs at most a needless read.
    await other.putRule("u:alice", { ...rule, rule: "Never email Tom." });
    expect(lessonsWrites(store, "u:alice")).toBe(3);
  });

  it("counts card, settings and guideline writes, and not the records, revisions or reads", async () => {
    const store = new InMemoryStore();
    const ledger = new Ledger(store);
    const count = () => lessonsWrites(store, "p");
    await ledger.putCard(cardFromTool(lookupClaim, "p", 1));
    expect(count()).toBe(1);
    await ledger.configure("p", { showLearnedExamples: false });
    expect(count()).toBe(2);
    await ledger.putToolMemory({ partition: "p", tool: "lookup_claim", guideline: null });
    expect(count()).toBe(3);
    await ledger.getCards("p", ["lookup_claim"]);
    await ledger.getSettings("p");
    await ledger.getToolMemories("p", ["lookup_claim"]);
    await ledger.listRules("p");
    await ledger.appendRoutes([{ partition: "p", requestId: "r1", offered: [], allSent: true, k: 4 }]);
    expect(count()).toBe(3);
    expect(lessonsWrites(store, "q")).toBe(0);
  });

  it("counts a write that failed (it may have written part), after it settled", async () => {
    const store = new InMemoryStore();
    let during = -1;
    await expect(
      countingLessonsWrite(store, ["p"], async () => {
        during = lessonsWrites(store, "p");
        throw new Error("store down");
      }),
    ).rejects.toThrow("store down");
    expect(during).toBe(0);
    expect(lessonsWrites(store, "p")).toBe(1);
  });
});

describe("writtenOnlyHere", () => {
  it("holds for LangGraph's InMemoryStore itself only: a file, a server or a subclass may be written elsewhere", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tl-stamp-"));
    dirs.push(dir);
    const sqlite = await SqliteStore.open(join(dir, "ledger.db"));
    expect(writtenOnlyHere(new InMemoryStore())).toBe(true);
    expect(writtenOnlyHere(sqlite)).toBe(false);
    expect(writtenOnlyHere(new (class extends InMemoryStore {})())).toBe(false);
    await sqlite.close();
  });
});
