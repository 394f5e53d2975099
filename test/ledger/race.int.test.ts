import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BaseStore } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { openPostgresStore } from "../../src/ledger/postgres.js";
import type { Revision } from "../../src/ledger/schema.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";
import { managerOver, P, seedFailures, seedProposed, seedTool, TOOL } from "../helpers/cas-world.js";
import { dropSchema, POSTGRES_URL, postgresUnavailableReason, uniqueSchema } from "../helpers/postgres.js";

/**
 * Races across OS processes, settled by the store: operator processes (test/helpers/cas-child.ts,
 * run with tsx) on one SQLite file and on one Postgres schema. Each racing process is held at a
 * barrier once it has read everything and passed its own checks, so the writes really race.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CHILD = fileURLToPath(new URL("../helpers/cas-child.ts", import.meta.url));
const PARTIES = 3;

interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  out: { who: string; ok: boolean; conflict?: boolean; winner?: string; message?: string; [k: string]: unknown };
}

/**
 * Run one child; with `killAfterCyclingMs`, SIGKILL it that long after it printed "cycling"
 * (its apply/undo loop started).
 */
function runChild(env: Record<string, string>, killAfterCyclingMs?: number): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", CHILD], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let killer: NodeJS.Timeout | undefined;
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
      if (killAfterCyclingMs !== undefined && killer === undefined && stdout.includes("cycling")) {
        killer = setTimeout(() => child.kill("SIGKILL"), killAfterCyclingMs);
      }
    });
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      clearTimeout(killer);
      const line = stdout.trim().split("\n").pop() ?? "";
      if (killAfterCyclingMs !== undefined)
        return resolve({ code, signal, stderr, out: { who: env.WHO ?? "", ok: false } });
      resolve({ code, signal, stderr, out: line ? JSON.parse(line) : { who: env.WHO ?? "", ok: false } });
    });
  });
}

interface Backend {
  env: Record<string, string>;
  open(): Promise<BaseStore>;
  cleanup(): Promise<void>;
}

const tmp = mkdtempSync(join(tmpdir(), "race-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let seq = 0;

async function sqliteBackend(): Promise<Backend> {
  const db = join(tmp, `ledger-${++seq}.db`);
  return { env: { BACKEND: "sqlite", DB: db }, open: () => SqliteStore.open(db), cleanup: async () => undefined };
}

async function postgresBackend(): Promise<Backend> {
  const schema = uniqueSchema("tl_race");
  return {
    env: { BACKEND: "postgres", POSTGRES_URL, PG_SCHEMA: schema },
    open: () => openPostgresStore(POSTGRES_URL, { schema }),
    cleanup: () => dropSchema(schema),
  };
}

const unavailable = await postgresUnavailableReason();
if (unavailable) console.warn(`[tool-lessons] Skipping the Postgres race tests: ${unavailable}`);

const BACKENDS: [string, () => Promise<Backend>, boolean][] = [
  ["a SQLite file", sqliteBackend, false],
  ["Postgres", postgresBackend, unavailable !== null],
];

/** Run `parties` children at once through one barrier. */
async function race(backend: Backend, children: Record<string, string>[]): Promise<ChildResult[]> {
  const barrier = join(tmp, `barrier-${++seq}`);
  mkdirSync(barrier);
  const results = await Promise.all(
    children.map((env) => runChild({ ...backend.env, BARRIER: barrier, PARTIES: String(children.length), ...env })),
  );
  for (const r of results) {
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  }
  return results;
}

/** Exactly one child won; every other lost with a RevisionConflict naming it. */
function oneWinner(results: ChildResult[], nameOf: (r: ChildResult) => string): ChildResult {
  const won = results.filter((r) => r.out.ok);
  expect(won).toHaveLength(1);
  for (const r of results.filter((x) => !x.out.ok)) {
    expect(r.out.conflict).toBe(true);
    expect(r.out.winner).toBe(nameOf(won[0]));
  }
  return won[0];
}

describe.each(BACKENDS)("races across processes on %s", (_name, make, skip) => {
  const test = skip ? it.skip : it;

  async function withLedger<T>(backend: Backend, fn: (ledger: Ledger) => Promise<T>): Promise<T> {
    const store = await backend.open();
    try {
      return await fn(new Ledger(store, { failureSink: () => undefined }));
    } finally {
      await store.stop();
    }
  }

  test(`${PARTIES} processes apply one revision: one wins, the others get RevisionConflict naming it`, async () => {
    const backend = await make();
    try {
      const revision = await withLedger(backend, async (l) => (await seedTool(l), seedProposed(l)));
      const results = await race(
        backend,
        ["alice", "bob", "carol"].map((who) => ({ ACTION: "apply", WHO: who, REVISION: revision.id })),
      );
      const won = oneWinner(results, (r) => r.out.who);
      await withLedger(backend, async (l) => {
        expect(await l.requireRevision(P, revision.id)).toMatchObject({ status: "applied", approvedBy: won.out.who });
        const card = await l.getCard(P, TOOL);
        expect(card?.version).toBe(2);
        expect(card?.learned.notes).toHaveLength(1);
      });
    } finally {
      await backend.cleanup();
    }
  });

  test("apply racing dismiss in two processes: one wins, and the card agrees", async () => {
    const backend = await make();
    try {
      const revision = await withLedger(backend, async (l) => (await seedTool(l), seedProposed(l)));
      const results = await race(backend, [
        { ACTION: "apply", WHO: "alice", REVISION: revision.id },
        { ACTION: "dismiss", WHO: "bob", REVISION: revision.id },
      ]);
      const won = oneWinner(results, (r) => r.out.who);
      await withLedger(backend, async (l) => {
        const stored = await l.requireRevision(P, revision.id);
        const card = await l.getCard(P, TOOL);
        expect(stored.status).toBe(won.out.who === "alice" ? "applied" : "dismissed");
        expect(card?.version).toBe(won.out.who === "alice" ? 2 : 1);
        expect(card?.learned.notes).toHaveLength(won.out.who === "alice" ? 1 : 0);
      });
    } finally {
      await backend.cleanup();
    }
  });

  test(`${PARTIES} processes undo one revision: one wins, the card goes back once`, async () => {
    const backend = await make();
    try {
      const revision = await withLedger(backend, async (l) => {
        await seedTool(l);
        const r = await seedProposed(l);
        await managerOver(l).apply(r.id, { approvedBy: "alice" });
        return r;
      });
      const results = await race(
        backend,
        ["bob", "carol", "dave"].map((who) => ({ ACTION: "undo", WHO: who })),
      );
      const won = oneWinner(results, (r) => r.out.who);
      await withLedger(backend, async (l) => {
        expect(await l.requireRevision(P, revision.id)).toMatchObject({ status: "undone", closedBy: won.out.who });
        const card = await l.getCard(P, TOOL);
        expect(card?.version).toBe(3);
        expect(card?.learned.notes).toEqual([]);
      });
    } finally {
      await backend.cleanup();
    }
  });

  test(`${PARTIES} processes review at once: one revision of the tool is stored`, async () => {
    const backend = await make();
    try {
      await withLedger(backend, async (l) => {
        await seedTool(l);
        await seedFailures(l, 3);
      });
      const results = await race(
        backend,
        ["r1", "r2", "r3"].map((who) => ({ ACTION: "review", WHO: who })),
      );
      const stored = results.flatMap((r) => r.out.stored as string[]);
      expect(stored).toHaveLength(1);
      await withLedger(backend, async (l) => {
        expect((await l.listRevisions(P, { tool: TOOL })).map((r) => r.id)).toEqual(stored);
      });
    } finally {
      await backend.cleanup();
    }
  });

  test(`${PARTIES} processes upsert one rule at once: one row, createdAt kept by later upserts`, async () => {
    const backend = await make();
    try {
      const results = await race(
        backend,
        ["u1", "u2", "u3"].map((who) => ({ ACTION: "rule", WHO: who })),
      );
      const rules = results.map((r) => r.out.rule as { id: string; createdAt: number });
      expect(new Set(rules.map((r) => r.id)).size).toBe(1);
      await withLedger(backend, async (l) => {
        const [stored, ...more] = await l.listRules(P);
        expect(more).toEqual([]);
        expect(rules.map((r) => r.createdAt)).toContain(stored.createdAt);
        expect(Math.min(...rules.map((r) => r.createdAt))).toBe(stored.createdAt);
        await new Promise((r) => setTimeout(r, 20));
        const again = await l.putRule(P, {
          tool: TOOL,
          rule: "Never refund twice.",
          priority: "high",
          source: "programmatic",
        });
        expect(again.createdAt).toBe(stored.createdAt);
        expect(again.updatedAt).toBeGreaterThan(stored.createdAt);
      });
    } finally {
      await backend.cleanup();
    }
  });
});

/** Card and revisions tell one story: every applied revision's note is on the card, nothing else, at its version. */
function expectConsistent(
  card: { version: number; learned: { notes: { revisionId: string }[] } },
  revisions: Revision[],
) {
  const applied = revisions.filter((r) => r.status === "applied").map((r) => r.id);
  const undone = revisions.filter((r) => r.status === "undone").length;
  expect(card.learned.notes.map((n) => n.revisionId).sort()).toEqual(applied.sort());
  expect(card.version).toBe(1 + applied.length + 2 * undone);
}

(unavailable ? describe.skip : describe)("a process killed in the middle of apply or undo, on Postgres", () => {
  it("leaves the card at the old version when killed after the writes and before COMMIT, for apply and for undo", async () => {
    const backend = await postgresBackend();
    try {
      await withStore(backend, (l) => seedTool(l));
      const apply = await runChild({ ...backend.env, ACTION: "kill-at-commit", STEP: "apply", WHO: "alice" });
      expect(apply.signal).toBe("SIGKILL");
      await withStore(backend, async (l) => {
        const card = await l.getCard(P, TOOL);
        expect(card).toMatchObject({ version: 1, learned: { notes: [] } });
        const [revision] = await l.listRevisions(P);
        expect(revision).toMatchObject({ status: "proposed", notesAdded: ["killed apply"] });
        await managerOver(l).apply(revision.id, { approvedBy: "bob" });
      });
      const undo = await runChild({ ...backend.env, ACTION: "kill-at-commit", STEP: "undo", WHO: "carol" });
      expect(undo.signal).toBe("SIGKILL");
      await withStore(backend, async (l) => {
        const card = await l.getCard(P, TOOL);
        expect(card?.version).toBe(2);
        expect(card?.learned.notes.map((n) => n.text)).toEqual(["killed apply"]);
        expect((await l.listRevisions(P))[0]).toMatchObject({ status: "applied", approvedBy: "bob" });
      });
    } finally {
      await backend.cleanup();
    }
  });

  it("leaves every card exactly the old or the new version when killed at a random moment of applies and undos", async () => {
    const backend = await postgresBackend();
    try {
      await withStore(backend, (l) => seedTool(l));
      let cycles = 0;
      for (const ms of [300, 650, 1000]) {
        const killed = await runChild({ ...backend.env, ACTION: "cycle", WHO: "ops" }, ms);
        expect(killed.signal).toBe("SIGKILL");
        await withStore(backend, async (l) => {
          const card = await l.getCard(P, TOOL);
          if (!card) throw new Error("no card");
          const revisions = await l.listRevisions(P);
          expect(revisions.length).toBeGreaterThan(cycles);
          cycles = revisions.length;
          expectConsistent(card, revisions);
          // A revision left proposed by the kill is dismissed, so the next cycle can undo cleanly.
          for (const r of await l.listRevisions(P, { status: "proposed" })) await managerOver(l).dismiss(r.id);
          // Leave no applied revision behind: the next child's undo would take it back.
          if ((await l.listRevisions(P, { status: "applied" })).length > 0)
            await managerOver(l).undo(TOOL, { approvedBy: "ops" });
        });
      }
    } finally {
      await backend.cleanup();
    }
  });

  async function withStore<T>(backend: Backend, fn: (ledger: Ledger) => Promise<T>): Promise<T> {
    const store = await backend.open();
    try {
      return await fn(new Ledger(store, { failureSink: () => undefined }));
    } finally {
      await store.stop();
    }
  }
});
