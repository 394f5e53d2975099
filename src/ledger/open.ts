import { resolve } from "node:path";
import type { BaseStore } from "@langchain/langgraph";
import { readEnv, type ToolLessonsEnv } from "../env.js";
import { InvalidInput, StoreUnavailable } from "../errors.js";
import { keyRequired } from "./collections/fingerprint-key.js";
import { refuseControlCharacters } from "./ledger-path.js";
import { Ledger, type LedgerOptions } from "./ledger.js";

/** Options of {@link openLedger}: where the ledger lives, plus the {@link LedgerOptions}. */
export interface OpenLedgerOptions extends Omit<LedgerOptions, "ownsStore"> {
  /**
   * Use this store as is (e.g. the one your graph is compiled with). It stays yours:
   * `ledger.close()` does not stop it. Exclusive with `path` and `postgresUrl`.
   */
  store?: BaseStore;
  /**
   * SQLite file of the embedded ledger, relative to the working directory; created with its
   * directories if missing. Exclusive with `store` and `postgresUrl`.
   * @default TOOL_LESSONS_LEDGER, else ".tool-lessons/ledger.db"
   */
  path?: string;
  /**
   * Postgres connection string: open a `PostgresStore` (needs the optional peer
   * `@langchain/langgraph-checkpoint-postgres`). Exclusive with `store` and `path`.
   * @default TOOL_LESSONS_POSTGRES_URL when no `path` is given
   */
  postgresUrl?: string;
  /**
   * Postgres schema of the store's tables, with `postgresUrl`.
   * @default "public"
   */
  postgresSchema?: string;
  /**
   * The environment read for the defaults above.
   * @default readEnv() (process.env)
   */
  env?: ToolLessonsEnv;
}

/**
 * Defaults of {@link OpenLedgerOptions} that live here: the embedded ledger's file, under the
 * working directory. (`postgresSchema` defaults in `openPostgresStore`, loaded on demand; the
 * other fields have no default but the environment.)
 */
export const DEFAULT_OPEN_LEDGER_OPTIONS: Readonly<Required<Pick<OpenLedgerOptions, "path">>> = Object.freeze({
  path: ".tool-lessons/ledger.db",
});

/**
 * Open the ledger. Which store it writes to, first match wins:
 *
 * 1. `store`: used as is, never closed by the ledger;
 * 2. `postgresUrl`: a `PostgresStore` (set up, no vector index);
 * 3. `path`: a SQLite file;
 * 4. `TOOL_LESSONS_POSTGRES_URL`, then `TOOL_LESSONS_LEDGER` from the environment;
 * 5. the embedded default, a SQLite file at `.tool-lessons/ledger.db` under the working directory.
 *
 * Call `ledger.close()` when done: it closes the SQLite file or ends the Postgres pool the
 * ledger opened, and leaves a store you passed in alone.
 *
 * The same Postgres ledger in two steps, the way LangGraph users make a `PostgresStore`:
 * `PostgresLedger.fromConnString(url, { schema })` from `tool-lessons/postgres`, then an explicit
 * `await ledger.setup()` at startup.
 *
 * The key of the ledger's fingerprints and word tokens is never a row of the store: `secret`, else
 * `TOOL_LESSONS_KEY`, else (SQLite) a 0600 key file beside the ledger file, `<path>.key`; over
 * Postgres one of the first two is required (see {@link LedgerOptions.secret}).
 *
 * @throws InvalidInput when more than one of `store`, `path`, `postgresUrl` is given, or the path
 *   holds a NUL or another control character.
 * @throws KeyRequired over Postgres without `secret` or `TOOL_LESSONS_KEY` (before connecting).
 * @throws StoreUnavailable when the file or server cannot be opened (the message says how to fix it).
 *
 * @example
 * ```ts
 * const ledger = await openLedger();                                  // .tool-lessons/ledger.db
 * const shared = await openLedger({ store: graphStore });             // the graph's own store
 * const scaled = await openLedger({ postgresUrl: process.env.DATABASE_URL });
 * await ledger.close();
 * ```
 */
export async function openLedger(options: OpenLedgerOptions = {}): Promise<Ledger> {
  const { store, path, postgresUrl, postgresSchema, env, secret, ...ledgerOptions } = options;
  const given = [store && "store", path !== undefined && "path", postgresUrl !== undefined && "postgresUrl"].filter(
    (name): name is string => typeof name === "string",
  );
  if (given.length > 1) {
    throw new InvalidInput(`openLedger takes one of store, path or postgresUrl; got ${given.join(" and ")}.`, {
      context: { given },
    });
  }
  // The environment is read for the store only when no store, path or URL is given, and for the key only without `secret`.
  const environment = () => env ?? readEnv();
  const keyOptions = secret !== undefined ? { secret } : { env: environment() };
  if (store) return new Ledger(store, { ...ledgerOptions, ...keyOptions, ownsStore: false });

  const fromEnv = path === undefined && postgresUrl === undefined ? environment() : {};
  const url = postgresUrl ?? fromEnv.postgresUrl;
  if (url !== undefined && keyOptions.secret === undefined && keyOptions.env?.ledgerKey === undefined) {
    throw keyRequired("Postgres");
  }
  const file = path ?? fromEnv.ledgerPath ?? DEFAULT_OPEN_LEDGER_OPTIONS.path;
  if (url === undefined) {
    if (typeof file !== "string") {
      throw new InvalidInput(`openLedger's path must be a string; got a ${typeof file}.`, {
        context: { field: "path" },
      });
    }
    refuseControlCharacters(file);
  }
  const opened = url !== undefined ? await openPostgres(url, postgresSchema) : await openSqlite(resolve(file));
  try {
    return new Ledger(opened, { ...ledgerOptions, ...keyOptions, ownsStore: true });
  } catch (error) {
    // The key could not be had (an unreadable key file): the store opened for it is closed again.
    await opened.stop();
    throw error;
  }
}

/** Loaded on demand: the Postgres backend is an optional peer dependency. */
async function openPostgres(url: string, schema: string | undefined): Promise<BaseStore> {
  let module: typeof import("./postgres.js");
  try {
    module = await import("./postgres.js");
  } catch (error) {
    throw new StoreUnavailable(
      "The Postgres ledger needs @langchain/langgraph-checkpoint-postgres: " +
        "`npm install @langchain/langgraph-checkpoint-postgres`.",
      { cause: error },
    );
  }
  return module.openPostgresStore(url, { schema });
}

/** Loaded on demand, so users of another backend never load the native SQLite module. */
async function openSqlite(file: string): Promise<BaseStore> {
  const { SqliteStore } = await import("./sqlite-store.js");
  return SqliteStore.open(file);
}
