/**
 * One operator process of the race tests (test/ledger/race.int.test.ts): opens the shared
 * ledger (a SQLite file or a Postgres schema), does one ACTION, prints one JSON line with what
 * came of it, and exits 0 (a lost race is an outcome, not a failure) or 1 on anything else.
 *
 * Racing actions (apply, dismiss, undo, review, rule) wait at a barrier once they have read
 * everything and are about to write (`Ledger.commit`, or the rule's put): each writes
 * BARRIER/<WHO> and goes on once PARTIES files are there, so every process has passed its own
 * checks before any of them writes, and only the store can settle the race.
 *
 * `kill-at-commit` seeds a proposed revision and applies it, or undoes (`STEP`), with the
 * store's COMMIT intercepted: the process SIGKILLs itself once a transaction that wrote has sent
 * everything but its COMMIT (Postgres only). `cycle` applies and undoes until it is killed.
 *
 * env: BACKEND (sqlite | postgres), DB (sqlite file), POSTGRES_URL, PG_SCHEMA, ACTION, WHO,
 * REVISION, BARRIER, PARTIES, STEP.
 */
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { BaseStore } from "@langchain/langgraph";
import { RevisionConflict } from "../../src/errors.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { openChildStore } from "./child-store.js";
import { managerOver, P, seedProposed, TOOL } from "./cas-world.js";

const env = process.env;
const who = env.WHO ?? "w";

async function barrier(): Promise<void> {
  const dir = env.BARRIER;
  const parties = Number(env.PARTIES ?? 1);
  if (!dir || !existsSync(dir)) return;
  writeFileSync(join(dir, who), "");
  const deadline = Date.now() + 30_000;
  while (readdirSync(dir).length < parties) {
    if (Date.now() > deadline) throw new Error("barrier: the other processes never came");
    await sleep(2);
  }
}

function gateCommit(ledger: Ledger): void {
  const commit = ledger.commit.bind(ledger);
  let gated = false;
  ledger.commit = async (partition, change) => {
    if (!gated) {
      gated = true;
      await barrier();
    }
    return commit(partition, change);
  };
}

/** SIGKILL this process when the store is about to send COMMIT (writes sent, not committed). */
function killAtCommit(store: BaseStore): void {
  const pool = (store as unknown as { core: { pool: { connect(): Promise<{ query: (...a: unknown[]) => unknown }> } } })
    .core.pool;
  const connect = pool.connect.bind(pool);
  pool.connect = async () => {
    const client = await connect();
    const query = client.query.bind(client);
    let wrote = false;
    client.query = (...args: unknown[]) => {
      if (typeof args[0] === "string" && args[0].includes("INSERT INTO")) wrote = true;
      if (args[0] === "COMMIT" && wrote) process.kill(process.pid, "SIGKILL");
      return query(...args);
    };
    return client;
  };
}

async function main(): Promise<unknown> {
  const store = await openChildStore();
  const ledger = new Ledger(store, { failureSink: () => undefined });
  const manager = managerOver(ledger);
  const action = env.ACTION;
  try {
    if (action === "kill-at-commit") {
      if (env.STEP === "apply") {
        const revision = await seedProposed(ledger, "killed apply");
        killAtCommit(store);
        await manager.apply(revision.id, { approvedBy: who });
      } else {
        killAtCommit(store);
        await manager.undo(TOOL, { approvedBy: who });
      }
      return { survived: true };
    }
    if (action === "cycle") {
      // Apply and undo until killed.
      process.stdout.write("cycling\n");
      for (let i = 0; ; i++) {
        const revision = await seedProposed(ledger, `cycle ${i}`);
        await manager.apply(revision.id, { approvedBy: who });
        await manager.undo(TOOL, { approvedBy: who });
      }
    }
    if (action === "rule") {
      await barrier();
      const rule = await ledger.putRule(P, {
        tool: TOOL,
        rule: "Never refund twice.",
        priority: "critical",
        source: "programmatic",
      });
      return { rule: { id: rule.id, createdAt: rule.createdAt, updatedAt: rule.updatedAt } };
    }
    gateCommit(ledger);
    const id = env.REVISION ?? "";
    if (action === "apply") return { revision: await manager.apply(id, { approvedBy: who }) };
    if (action === "dismiss") return { revision: await manager.dismiss(id, { by: who }) };
    if (action === "undo") return { revision: await manager.undo(TOOL, { approvedBy: who }) };
    if (action === "review") return { stored: (await manager.review()).revisions.map((r) => r.id) };
    throw new Error(`unknown ACTION ${String(action)}`);
  } finally {
    await store.stop();
  }
}

main().then(
  (result) => {
    process.stdout.write(`${JSON.stringify({ who, ok: true, ...(result as object) })}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    if (error instanceof RevisionConflict) {
      process.stdout.write(
        `${JSON.stringify({ who, ok: false, conflict: true, winner: error.winner, message: error.message })}\n`,
      );
      process.exit(0);
    }
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
