/**
 * The proof of issue 19: every case of the hostile corpus (test/fixtures/hostile-corpus.jsonl)
 * through every channel untrusted text enters by, into every sink it could come out of, on a
 * real LangGraph agent with the real recorder, route node, review and prompt builder.
 *
 * Channels (see ./channels.ts): a value as a top-level argument, nested 10 deep, in an array past
 * index 1,000, as an object key; the case's text thrown by a tool, in an error ToolMessage (a zod
 * schema refusal), as a tool's output; as the user's turn without and with routing (route node +
 * ToolRouter over a ToolIndex); what the model is shown with the partition's
 * `showLearnedExamples` off and on (every channel).
 *
 * Sinks, each checked for every planted value of every case (./leaks.ts): the SQLite file and its
 * WAL as raw bytes after the traffic's flush, after review (before close) and after close; a
 * Postgres table's rows; every lesson after `review({ autoApply: true })`; the routing text; the
 * text the model is shown (`modelDescription` of every card, and what the scripted model was sent
 * on every call); everything written to the recorder's and the route node's `failureSink`, the
 * ledger's `failureSink` and console.warn / error / log / info / debug. Injection cases are also
 * checked not to reach a lesson, the routing text or the prompt.
 *
 * The Postgres sink runs on every 16th case of each channel, not all: each review and apply is a
 * round trip per store batch, and the full corpus on Postgres would double the test's time. The
 * corpus is ordered by family, so the stride takes cases of every family. The SQLite bytes and the
 * lessons cover every case.
 *
 * The figures (cases tried / refused / leaked per channel and per sink, the first leaks) are
 * printed and written to test-results/privacy-channels.json. Each channel's test fails when any
 * case leaks into any sink.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { format } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { openPostgresStore, type PostgresStore } from "../../src/ledger/postgres.js";
import { SqliteStore } from "../../src/ledger/sqlite-store.js";
import { dropSchema, POSTGRES_URL, postgresUnavailableReason, uniqueSchema } from "../helpers/postgres.js";
import { BENIGN_TEXTS, CHANNELS, type ChannelRun, type OpenStore, runChannel } from "./channels.js";
import { loadCorpus, storeGroups } from "./corpus.js";
import { type ChannelFigures, evaluateChannel, formatReport, SHOWN_LEAKS, writeReport } from "./report.js";

const CORPUS = loadCorpus();
/** The Postgres sink's subset: every 16th case (see the file's comment). */
const POSTGRES_STRIDE = 16;
const POSTGRES_CASES = CORPUS.filter((_, i) => i % POSTGRES_STRIDE === 0);
/** Cases that could not be told apart in one store run in different stores (see `storeGroups`). */
const GROUPS = storeGroups(CORPUS);
const POSTGRES_GROUPS = storeGroups(POSTGRES_CASES);
const REPORT = "test-results/privacy-channels.json";

const dir = mkdtempSync(join(tmpdir(), "tl-privacy-channels-"));

const openSqlite: OpenStore = async (channel, failureSink) => {
  const file = join(dir, `${channel}.db`);
  const store = await SqliteStore.open(file);
  return {
    ledger: new Ledger(store, { failureSink }),
    files: [file, `${file}-wal`],
    close: () => store.close(),
  };
};

let postgres: { store: PostgresStore; schema: string } | undefined;
let postgresSkipped: string | null = null;

function openPostgres(store: PostgresStore, schema: string): OpenStore {
  return async (channel, failureSink) => {
    const root = `tl-${channel}`;
    return {
      ledger: new Ledger(store, { namespaceRoot: root, failureSink }),
      rows: async () => {
        const client = new pg.Client({ connectionString: POSTGRES_URL });
        await client.connect();
        try {
          const { rows } = await client.query<{ namespace_path: string; key: string; value: string }>(
            `SELECT namespace_path, key, value::text AS value FROM "${schema}".store WHERE namespace_path LIKE $1`,
            [`${root}:%`],
          );
          return rows.map((r) => `${r.namespace_path} ${r.key} ${r.value}`).join("\n");
        } finally {
          await client.end();
        }
      },
      // The store is shared by the channels; it is stopped after the last one.
      close: async () => undefined,
    };
  };
}

/** Everything written to the console while `body` runs, as it would have been printed. */
async function withConsole<T>(lines: string[], body: () => Promise<T>): Promise<T> {
  const spies = (["warn", "error", "log", "info", "debug"] as const).map((method) =>
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      lines.push(`console.${method}: ${format(...args)}`);
    }),
  );
  try {
    return await body();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

const figures: ChannelFigures[] = [];

describe("the hostile corpus through every channel, into every sink", () => {
  beforeAll(async () => {
    postgresSkipped = await postgresUnavailableReason();
    if (postgresSkipped) {
      process.stdout.write(`[privacy channels] the Postgres sink is skipped: ${postgresSkipped}\n`);
      return;
    }
    const schema = uniqueSchema("tl_privacy");
    postgres = { store: await openPostgresStore(POSTGRES_URL, { schema }), schema };
  });

  afterAll(async () => {
    process.stdout.write(formatReport(figures));
    writeReport(REPORT, figures, {
      corpus: { cases: CORPUS.length, postgresCases: postgres ? POSTGRES_CASES.length : 0 },
      postgresSkipped,
      command: "POSTGRES_URL=postgresql://postgres@127.0.0.1:5432/test npx vitest run test/privacy",
    });
    if (postgres) {
      await postgres.store.stop();
      await dropSchema(postgres.schema);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(CHANNELS.map((spec) => [spec.id, spec] as const))(
    "%s: no case leaks",
    async (_id, spec) => {
      const lines: string[] = [];
      const runs: ChannelRun[] = await withConsole(lines, async () => {
        const out: ChannelRun[] = [];
        for (const [g, group] of GROUPS.entries()) {
          const name = `${spec.id}-${g + 1}`;
          out.push(await runChannel(spec, group, { backend: "sqlite", name, open: openSqlite, console: lines }));
        }
        if (postgres) {
          const open = openPostgres(postgres.store, postgres.schema);
          for (const [g, group] of POSTGRES_GROUPS.entries()) {
            const name = `${spec.id}-${g + 1}`;
            out.push(await runChannel(spec, group, { backend: "postgres", name, open, console: lines }));
          }
        }
        return out;
      });
      const channel = evaluateChannel(runs, BENIGN_TEXTS);
      figures.push(channel);
      expect(channel.tried).toBe(CORPUS.length);
      // The sinks are read at all: the store's bytes and rows hold the run's records.
      expect(runs.map((r) => [r.backend, r.controls])).toEqual(
        runs.map((r) => [r.backend, { bytesHoldRecords: true, rowsHoldRecords: true }]),
      );
      expect(
        channel.leaks.slice(0, SHOWN_LEAKS),
        `${channel.leaks.length} of ${channel.tried} cases leak through ${spec.id} (first ${SHOWN_LEAKS} shown; all in ${REPORT})`,
      ).toEqual([]);
    },
    240_000,
  );

  it("learns lessons from the corpus's traffic, so that no leak into a lesson is not for want of lessons", () => {
    expect(figures).toHaveLength(CHANNELS.length);
    const total = (k: keyof ChannelFigures["lessons"]): number => figures.reduce((n, f) => n + f.lessons[k], 0);
    // Notes from repeated failures (calls channels), examples from missed requests (turn channels).
    expect(total("notes")).toBeGreaterThan(0);
    expect(total("examples")).toBeGreaterThan(0);
    expect(total("notFor") + total("exampleCalls")).toBeGreaterThan(0);
    for (const f of figures) expect(f.runErrors, f.channel).toEqual([]);
  });
});
