import { copyFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openLedger } from "../../src/ledger/open.js";
import { effectWorld } from "../learn/effect-world.js";
import { runCli, tempDir } from "./run-cli.js";

/**
 * `tool-lessons effects` and `history` on a SQLite ledger: a lesson applied, then the refusals it
 * answered go on as before: the command flags it, and with --undo takes it back, the reason kept.
 */
describe("tool-lessons effects", () => {
  const tmp = tempDir();
  const path = join(tmp.dir, "ledger.db");
  afterAll(() => tmp.cleanup());

  it("flags a lesson with no measured effect, shows it in history, and undoes it with --undo --by", async () => {
    const ledger = await openLedger({ path });
    let id: string;
    try {
      const w = await effectWorld(ledger);
      id = (await w.learnAndApply()).id;
      for (let i = 0; i < 12; i++) await w.lookup(true);
    } finally {
      await ledger.close();
    }
    const run = await runCli("effects", "--ledger", path);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`lookup_order  revision ${id}: FLAGGED no effect (failure:validation 12/24 -> 12/24)`);
    const history = await runCli("history", "lookup_order", "--ledger", path);
    expect(history.stdout).toContain("effect:         FLAGGED no effect (failure:validation 12/24 -> 12/24)");
    const review = await runCli("review", "--dry-run", "--ledger", path);
    expect(review.code, review.stderr).toBe(0);
    expect(review.stdout).toMatch(
      new RegExp(
        `applied lessons, measured effect:\\n.*\\n {2}lookup_order {2}${id} {2}FLAGGED no effect \\(failure:validation 12/24 -> 12/24\\)`,
      ),
    );
    const reviewJson = JSON.parse((await runCli("review", "--dry-run", "--json", "--ledger", path)).stdout);
    expect(reviewJson.effects).toMatchObject([{ id, verdict: "no_effect" }]);

    expect((await runCli("effects", "--undo", "--ledger", path)).code).toBe(2);
    // The same undo on a copy of the ledger, as a person reads it.
    const copy = join(tmp.dir, "copy.db");
    for (const suffix of ["", "-wal"]) if (existsSync(path + suffix)) copyFileSync(path + suffix, copy + suffix);
    const said = await runCli("effects", "--undo", "--by", "alice", "--ledger", copy);
    expect(said.code, said.stderr).toBe(0);
    expect(said.stdout.trimEnd().split("\n")).toEqual([
      `lookup_order  revision ${id}: FLAGGED no effect (failure:validation 12/24 -> 12/24)  (undone)`,
      "undid 1 flagged revision; running agents serve the cards without it from their next turn.",
    ]);
    const undo = await runCli("effects", "--undo", "--by", "alice", "--ledger", path, "--json");
    expect(undo.code, undo.stderr).toBe(0);
    expect(JSON.parse(undo.stdout)).toMatchObject([{ id, verdict: "no_effect", undone: true }]);
    const after = await runCli("history", "lookup_order", "--ledger", path);
    expect(after.stdout).toContain(`revision ${id}  lookup_order  [undone]`);
    expect(after.stdout).toContain("undone by:      alice");
    expect(after.stdout).toContain("undone because: no measured effect on what it answered");
  });
});
