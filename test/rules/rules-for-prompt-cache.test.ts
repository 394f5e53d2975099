/**
 * `LessonManager.rulesForPrompt` with a thread: the pinned block rendered once per thread and
 * served again, byte for byte and as the same object, until a rule that binds it is written, in
 * this process or by another one (here: a second store over the same SQLite file).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemoryStore } from "@langchain/langgraph";
import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { LessonManager } from "../../src/learn/manager.js";
import { Ledger } from "../../src/ledger/ledger.js";
import type { TurnRecord } from "../../src/ledger/schema.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";
import { renderRulesBlock } from "../../src/prompt/rules-block.js";
import { recordEdicts, recordObservations } from "../../src/rules/store.js";

vi.mock("../../src/prompt/rules-block.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/prompt/rules-block.js")>();
  return { ...original, renderRulesBlock: vi.fn(original.renderRulesBlock) };
});
const renders = vi.mocked(renderRulesBlock);
beforeEach(() => {
  renders.mockClear();
});

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function managerOver(ledger: Ledger): LessonManager {
  return new LessonManager({ ledger, index: new ToolIndex({ ledger }) });
}

const TOOLS = ["send_email", "exec_command"];
const critical = { priority: "critical", source: "user_explicit" } as const;
const alice = { partition: "u:alice", threadId: "t-1" };

describe("rulesForPrompt, once per thread", () => {
  it("serves a thread's later turns the same block without rendering it again", async () => {
    const m = managerOver(new Ledger(new InMemoryStore()));
    await m.putRule({ ...critical, tool: "send_email", rule: "Never email Sarah." }, alice);
    const first = await m.rulesForPrompt(TOOLS, alice);
    expect(renders).toHaveBeenCalledTimes(1);
    for (let turn = 0; turn < 5; turn++) {
      const again = await m.rulesForPrompt(TOOLS, alice);
      expect(again).toBe(first);
    }
    expect(renders).toHaveBeenCalledTimes(1);
    expect(first.text).toContain("- [critical] Never email Sarah.");
    // The routed tools as a set: the same tools in another order are the same block.
    expect(await m.rulesForPrompt([...TOOLS].reverse(), alice)).toBe(first);
    expect(renders).toHaveBeenCalledTimes(1);
    expect(Object.isFrozen(first) && Object.isFrozen(first.shown)).toBe(true);
  });

  it("renders on every call without a thread, as before", async () => {
    const m = managerOver(new Ledger(new InMemoryStore()));
    await m.putRule({ ...critical, tool: "send_email", rule: "Never email Sarah." }, alice);
    const a = await m.rulesForPrompt(TOOLS, { partition: "u:alice" });
    const b = await m.rulesForPrompt(TOOLS, { partition: "u:alice" });
    expect(renders).toHaveBeenCalledTimes(2);
    expect(b).not.toBe(a);
    expect(b.text).toBe(a.text);
  });

  it("renders anew after each kind of rule write: put, edict, observation, delete, promote, a shared put", async () => {
    const ledger = new Ledger(new InMemoryStore());
    const m = managerOver(ledger);
    let last = await m.rulesForPrompt(TOOLS, alice);
    expect(last.text).toBe("");
    let count = 1;
    const changed = async (): Promise<string> => {
      const block = await m.rulesForPrompt(TOOLS, alice);
      count += 1;
      expect(renders).toHaveBeenCalledTimes(count);
      expect(block).not.toBe(last);
      last = block;
      expect(await m.rulesForPrompt(TOOLS, alice)).toBe(block);
      expect(renders).toHaveBeenCalledTimes(count);
      return block.text;
    };

    const put = await m.putRule(
      { tool: "exec_command", rule: "Ask before sudo.", priority: "high", source: "programmatic" },
      alice,
    );
    expect(await changed()).toContain("- [high] Ask before sudo.");

    await recordEdicts(ledger, { partition: "u:alice", text: "Never email Sarah.", tools: TOOLS, calledTools: [] });
    expect(await changed()).toContain("- [critical] Never email Sarah.");

    // An observation is a normal rule: not in the block, but a write all the same (re-rendered, same bytes).
    const before = last.text;
    const failed = { tool: "exec_command", outcome: "error", errorClass: "validation" };
    const stored = await recordObservations(ledger, {
      partition: "u:alice",
      calls: [failed, failed] as unknown as TurnRecord["calls"],
    });
    expect(stored).toHaveLength(1);
    expect(await changed()).toBe(before);

    expect(await m.deleteRule(put.id, alice)).toBe(true);
    expect(await changed()).not.toContain("Ask before sudo.");

    const [edict] = await m.listRules({ partition: "u:alice", tool: "send_email" });
    await m.promoteRule(edict.id, { partition: "u:alice", by: "ops" });
    await changed();
    expect(last.shown.map((r) => r.scope)).toEqual(["shared"]);

    await m.putRule(
      { ...critical, tool: "exec_command", rule: "Never run rm -rf.", source: "programmatic" },
      { scope: "shared" },
    );
    expect(await changed()).toContain("- [critical] Never run rm -rf.");
  });

  it("renders anew when the routed tools or the cap change", async () => {
    const m = managerOver(new Ledger(new InMemoryStore()));
    await m.putRule({ ...critical, tool: "send_email", rule: "Never email Sarah." }, alice);
    await m.putRule({ ...critical, tool: "exec_command", rule: "Never run rm -rf." }, alice);
    const both = await m.rulesForPrompt(TOOLS, alice);
    const email = await m.rulesForPrompt(["send_email"], alice);
    expect(email.text).not.toContain("rm -rf");
    const capped = await m.rulesForPrompt(["send_email"], { ...alice, maxRules: 1 });
    expect(renders).toHaveBeenCalledTimes(3);
    expect(capped.text).toBe(email.text);
    expect(both.text).toContain("rm -rf");
  });

  it("never serves one thread or partition another's block", async () => {
    const m = managerOver(new Ledger(new InMemoryStore()));
    await m.putRule({ ...critical, tool: "send_email", rule: "Never email Sarah." }, alice);
    const aliceBlock = await m.rulesForPrompt(TOOLS, alice);
    // Bob on a thread id alice also uses: his own (empty) block.
    const bob = await m.rulesForPrompt(TOOLS, { partition: "u:bob", threadId: "t-1" });
    expect(bob.text).toBe("");
    expect(await m.rulesForPrompt(TOOLS, alice)).toBe(aliceBlock);
    // Another thread of alice's: the same bytes, rendered for it.
    const other = await m.rulesForPrompt(TOOLS, { partition: "u:alice", threadId: "t-2" });
    expect(other).not.toBe(aliceBlock);
    expect(other.text).toBe(aliceBlock.text);
    // Bob's rule changes bob's block, not alice's.
    await m.putRule({ ...critical, tool: "send_email", rule: "Never email Tom." }, { partition: "u:bob" });
    expect((await m.rulesForPrompt(TOOLS, { partition: "u:bob", threadId: "t-1" })).text).toContain("Never email Tom.");
    const aliceAgain = await m.rulesForPrompt(TOOLS, alice);
    expect(aliceAgain.text).toBe(aliceBlock.text);
    expect(aliceAgain.text).not.toContain("Tom");
  });

  it("sees another process's put, update and delete (a second store over the same SQLite file)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tl-rules-cache-"));
    dirs.push(dir);
    const file = join(dir, "ledger.db");
    const ours = new Ledger(await SqliteStore.open(file), { ownsStore: true });
    const theirs = new Ledger(await SqliteStore.open(file), { ownsStore: true });
    const m = managerOver(ours);
    const tick = () => new Promise((r) => setTimeout(r, 3));

    await m.putRule({ ...critical, tool: "send_email", rule: "Never email Sarah." }, alice);
    const first = await m.rulesForPrompt(TOOLS, alice);
    expect(await m.rulesForPrompt(TOOLS, alice)).toBe(first);

    await tick();
    const high = await theirs.putRule("u:alice", {
      tool: "send_email",
      rule: "Keep emails short.",
      priority: "high",
      source: "programmatic",
    });
    const added = await m.rulesForPrompt(TOOLS, alice);
    expect(added.text).toContain("- [high] Keep emails short.");
    expect(await m.rulesForPrompt(TOOLS, alice)).toBe(added);

    await tick();
    await theirs.putRule("u:alice", { ...high, priority: "critical" });
    const updated = await m.rulesForPrompt(TOOLS, alice);
    expect(updated.text).toContain("- [critical] Keep emails short.");

    await theirs.deleteRule("u:alice", high.id);
    const removed = await m.rulesForPrompt(TOOLS, alice);
    expect(removed.text).toBe(first.text);
    expect(await m.rulesForPrompt(TOOLS, alice)).toBe(removed);
    await ours.close();
    await theirs.close();
  });
});
