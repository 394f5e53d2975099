/**
 * A fleet: the agent is one long-lived object built the documented way (`createToolLessonsAgent`
 * over the app's store), and the operator works from another process (its own `LessonManager`
 * and index over the same SQLite file or Postgres schema). What the operator applies, undoes or
 * rules there is served on the agent's first turn after it, with nothing restarted.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BaseStore } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { createToolLessonsAgent } from "../../src/graph/agent.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";
import type { ToolLessonsFailure } from "../../src/failure.js";
import { DeskModel, deskTools, human } from "../graph/desk.js";
import { freshPostgresStore, POSTGRES_URL, postgresUnavailableReason, uniqueSchema } from "../helpers/postgres.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const OPERATOR = fileURLToPath(new URL("../helpers/fleet-operator.ts", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tool-lessons-fleet-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The operator's process: one change, its JSON outcome. */
function operator(env: Record<string, string>): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", OPERATOR], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`operator exited ${code}: ${stderr}`));
      resolve(JSON.parse(stdout.trim().split("\n").pop() ?? "{}") as Record<string, unknown>);
    });
  });
}

interface Backend {
  store: BaseStore;
  env: Record<string, string>;
  close(): Promise<void>;
}

async function sqliteBackend(): Promise<Backend> {
  const db = join(tmp, `fleet-${Date.now()}.db`);
  const store = await SqliteStore.open(db);
  return { store, env: { BACKEND: "sqlite", DB: db }, close: async () => store.close() };
}

async function postgresBackend(): Promise<Backend> {
  const { store, schema, cleanup } = await freshPostgresStore(uniqueSchema("tl_fleet"));
  return { store, env: { BACKEND: "postgres", POSTGRES_URL, PG_SCHEMA: schema }, close: cleanup };
}

const unavailable = await postgresUnavailableReason();
if (unavailable) console.warn(`[tool-lessons] Skipping the Postgres fleet tests: ${unavailable}`);

const BACKENDS: [string, () => Promise<Backend>, boolean][] = [
  ["a SQLite file", sqliteBackend, false],
  ["Postgres", postgresBackend, unavailable !== null],
];

const PARTITION = "u:alice";
/** A wording that shares no word with any desk tool's description. */
const WORDING = "whereabouts of my stuff right now";

describe.each(BACKENDS)("a fleet over %s", (_name, open, skip) => {
  it.skipIf(skip)(
    "serves an example applied, a rule put and an undo made in another process on the running agent's next turn",
    async () => {
      const backend = await open();
      const failures: ToolLessonsFailure[] = [];
      const model = new DeskModel();
      const agent = createToolLessonsAgent({
        model,
        tools: deskTools(),
        store: backend.store,
        maxTools: 2,
        // What is tested is what is served, not how fast: a loaded machine must not skip routing.
        timeoutMs: 15_000,
        failureSink: (f) => failures.push(f),
      });
      let turns = 0;
      const ask = async (text: string) => {
        const state = await agent.invoke(
          { messages: [human(text)] },
          { configurable: { thread_id: `fleet-${++turns}`, user_id: "alice" }, metadata: { user_id: "alice" } },
        );
        return { routed: state.routedTools as string[], system: model.seen.at(-1)?.system ?? "" };
      };
      try {
        // Before: the wording reaches another tool first, asked twice (the second from the agent's own cache).
        const before = await ask(WORDING);
        expect(before.routed[0]).not.toBe("track_parcel");
        expect((await ask(WORDING)).routed).toEqual(before.routed);

        const applied = await operator({
          ...backend.env,
          ACTION: "learn-example",
          PARTITION,
          TOOL: "track_parcel",
          TEXT: WORDING,
        });
        expect(applied).toMatchObject({ status: "applied", queriesAdded: [WORDING], withdrawn: [] });
        expect((await ask(WORDING)).routed[0]).toBe("track_parcel");

        await operator({ ...backend.env, ACTION: "rule", PARTITION, TOOL: "send_email", TEXT: "Never email Sarah." });
        expect((await ask("Please email Sarah about the delay")).system).toMatch(/never email sarah/i);

        expect(await operator({ ...backend.env, ACTION: "undo", PARTITION, TOOL: "track_parcel" })).toEqual({
          status: "undone",
        });
        expect((await ask(WORDING)).routed).toEqual(before.routed);
        expect(failures).toEqual([]);
      } finally {
        await agent.recorder.flush();
        await backend.close();
      }
    },
    120_000,
  );
});
