import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchOperation,
} from "@langchain/langgraph";
import { InvalidInput, StoreUnavailable } from "../errors.js";
import { errorMessage } from "../internal.js";
import { type CasCheck, type CasOutcome, type CompareAndSetStore, failedChecks } from "./cas.js";
import { KEY_FILE_SUFFIX, type KeyFileStore } from "./collections/fingerprint-key.js";
import { refuseControlCharacters } from "./ledger-path.js";
import { isBusy, retryWhileBusy } from "./sqlite-busy.js";
import { matchesFilter, PUSHDOWN_KEY, pushdownEquality } from "./sqlite-filter.js";
import {
  compareNamespaces,
  count,
  encodeNamespace,
  matchesCondition,
  SEPARATOR,
  type StoreRow,
  toItem,
  typeOf,
  UPPER,
  validateLabels,
} from "./sqlite-rows.js";

/**
 * A search hit. `@langchain/langgraph` does not re-export `SearchItem`; this is the same shape.
 * `score` is never set: this store has no vector index.
 */
export type SqliteSearchItem = Item & { score?: number };

/** Options of {@link SqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * How long a write waits for another connection (this or another process) to release the
   * file's write lock before failing with `SQLITE_BUSY`, in milliseconds; also how long opening
   * the file (switching it to WAL) and creating the schema keep retrying while other processes
   * do the same. The wait blocks the event loop: better-sqlite3 is synchronous.
   * @default 5000
   */
  busyTimeoutMs?: number;
  /**
   * Create the schema on the first `batch` if {@link SqliteStore.setup} was not called.
   * @default true
   */
  ensureTables?: boolean;
}

/** Defaults of {@link SqliteStoreOptions}. */
const DEFAULT_SQLITE_STORE_OPTIONS: Readonly<Required<SqliteStoreOptions>> = Object.freeze({
  busyTimeoutMs: 5000,
  ensureTables: true,
});

const MIGRATIONS: readonly string[] = [
  // The primary key's index serves exact lookups and, as a range scan on `namespace`, prefix
  // search in (namespace, key) order; no second index is needed.
  `CREATE TABLE IF NOT EXISTS store (
    namespace  TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL CHECK (json_valid(value)),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (namespace, key)
  )`,
];

type OpResult = Item | null | SqliteSearchItem[] | string[][] | undefined;

/**
 * LangGraph `BaseStore` on SQLite (better-sqlite3): the embedded default ledger.
 *
 * - One row per item: `namespace` (labels joined by U+001F), `key`, `value` (JSON text),
 *   `created_at` / `updated_at` (ISO-8601), primary key `(namespace, key)`.
 * - `batch` runs every operation **in order, in one SQLite transaction**: a later operation sees
 *   the writes of an earlier one in the same batch, and a batch whose operation throws writes
 *   nothing (nor does one interrupted by a crash). Unlike `InMemoryStore`, which answers reads
 *   from the state before the batch and applies puts last.
 * - `search` matches namespaces label by label (`["tool","a"]` matches `["tool","a"]` and
 *   `["tool","a","x"]`, never `["tool","ab"]`), returns hits ordered by namespace then key,
 *   ascending (byte order of the UTF-8 text), and ignores `query`: without a vector index it
 *   ranks nothing, as `InMemoryStore` does when it has no index. `score` is never set.
 * - `filter` follows `InMemoryStore`: top-level fields; a plain value is an equality test; an
 *   object of operators `$eq $ne $gt $gte $lt $lte $in $nin` compares with those (`$gt`…`$lte`
 *   compare `Number(x)`). One difference: an object or array filter value is compared by deep
 *   equality (`InMemoryStore` compares by reference and never matches).
 * - Files are opened in WAL mode with `synchronous = NORMAL` and a busy timeout, so several
 *   connections and processes can share one file, and open it at the same moment (the switch to
 *   WAL and the schema set-up are retried while another one holds the lock). Writes take the
 *   lock at the start of the batch.
 *
 * @example
 * ```ts
 * const store = await SqliteStore.open("./.tool-lessons/ledger.db");
 * await store.put(["tool-lessons", "default", "cards"], "search", { notes: [] });
 * const hits = await store.search(["tool-lessons", "default"], { filter: { status: "active" } });
 * await store.close();
 * ```
 */
export class SqliteStore extends BaseStore implements CompareAndSetStore, KeyFileStore {
  /** The better-sqlite3 connection. Use it for read-only inspection, not to change the schema. */
  readonly db: Database.Database;

  private readonly options: Required<SqliteStoreOptions>;
  private readonly ownsDatabase: boolean;
  private readonly statements = new Map<string, Database.Statement>();
  private isSetup = false;
  private isClosed = false;

  /**
   * Wrap a connection or open a file. Does not create the schema: call {@link setup} (or let the
   * first `batch` do it, see {@link SqliteStoreOptions.ensureTables}), or use {@link open}.
   *
   * @param database A path (parent directories are created; `":memory:"` for a private
   *   in-memory database) or an open better-sqlite3 `Database`, which stays the caller's to close.
   * @param options See {@link SqliteStoreOptions}.
   * @throws {InvalidInput} The path holds a NUL or another control character (the file system would cut it short).
   * @throws {StoreUnavailable} The file cannot be created, opened or put in WAL mode.
   */
  constructor(database: Database.Database | string, options: SqliteStoreOptions = {}) {
    super();
    if (typeof database === "string") refuseControlCharacters(database);
    this.options = {
      busyTimeoutMs: Math.max(0, Math.floor(options.busyTimeoutMs ?? DEFAULT_SQLITE_STORE_OPTIONS.busyTimeoutMs)),
      ensureTables: options.ensureTables ?? DEFAULT_SQLITE_STORE_OPTIONS.ensureTables,
    };
    this.ownsDatabase = typeof database === "string";
    const path = typeof database === "string" ? database : database.name;
    const busyTimeoutMs = this.options.busyTimeoutMs;
    let db: Database.Database | undefined;
    try {
      if (typeof database === "string" && database !== ":memory:" && database !== "") {
        mkdirSync(dirname(resolve(database)), { recursive: true });
      }
      // The busy timeout comes first, so that every later step waits for other processes.
      const opened = typeof database === "string" ? new Database(database, { timeout: busyTimeoutMs }) : database;
      db = opened;
      opened.pragma(`busy_timeout = ${busyTimeoutMs}`);
      // Switching to WAL writes the file header inside a read transaction, so when another
      // process is switching the same fresh file at that moment SQLite answers SQLITE_BUSY at
      // once, without waiting the busy timeout: retry it.
      retryWhileBusy(() => opened.pragma("journal_mode = WAL"), busyTimeoutMs);
      opened.pragma("synchronous = NORMAL");
    } catch (error) {
      if (this.ownsDatabase && db?.open) db.close();
      throw this.openFailed("open the SQLite ledger at", path, error);
    }
    this.db = db;
  }

  /**
   * Where a ledger over this store keeps its key when the app gives no secret: `<file>.key`
   * beside the database file (mode 0600, see `collections/fingerprint-key.ts`), never a row of
   * the file itself. `undefined` for a database no other process can open (`:memory:`, a
   * temporary one): its ledger keys with a per-process key.
   */
  get ledgerKeyFile(): string | undefined {
    if (this.db.memory || this.db.name === "" || this.db.name === ":memory:") return undefined;
    return `${resolve(this.db.name)}${KEY_FILE_SUFFIX}`;
  }

  /**
   * Open (creating if needed) the database at `path` and create the schema.
   *
   * @param path File path, or `":memory:"`.
   * @param options See {@link SqliteStoreOptions}.
   * @returns A store ready to use.
   * @throws {StoreUnavailable} The file cannot be opened or the schema cannot be created.
   */
  static async open(path: string, options: SqliteStoreOptions = {}): Promise<SqliteStore> {
    const store = new SqliteStore(path, options);
    try {
      await store.setup();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /**
   * Create the tables if they do not exist and apply pending migrations. Idempotent; safe when
   * several processes call it at once: migrations run in one `BEGIN IMMEDIATE` transaction (under
   * the write lock), retried while another process holds the lock, up to `busyTimeoutMs`.
   *
   * @throws {StoreUnavailable} The schema cannot be created (read-only file, lock timeout…).
   */
  async setup(): Promise<void> {
    this.assertOpen();
    if (this.isSetup) return;
    const migrate = this.db.transaction(() => {
      this.db.exec("CREATE TABLE IF NOT EXISTS store_migrations (v INTEGER PRIMARY KEY)");
      const row = this.db.prepare("SELECT MAX(v) AS v FROM store_migrations").get() as { v: number | null } | undefined;
      const current = row?.v ?? -1;
      const record = this.db.prepare("INSERT INTO store_migrations (v) VALUES (?)");
      for (let v = current + 1; v < MIGRATIONS.length; v += 1) {
        this.db.exec(MIGRATIONS[v]);
        record.run(v);
      }
    });
    try {
      retryWhileBusy(() => migrate.immediate(), this.options.busyTimeoutMs);
    } catch (error) {
      throw this.openFailed("create the SQLite ledger schema in", this.db.name, error);
    }
    this.isSetup = true;
  }

  /**
   * Close the connection if this store opened it (a `Database` passed to the constructor is
   * left open). Idempotent. Any later operation throws {@link StoreUnavailable}.
   */
  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    this.statements.clear();
    if (this.ownsDatabase && this.db.open) this.db.close();
  }

  /** `BaseStore` lifecycle hook: same as {@link close}. */
  override async stop(): Promise<void> {
    await this.close();
  }

  /**
   * Run operations in order, in one transaction, and return their results in the same order:
   * `Item | null` for a get, `SearchItem[]` for a search, `string[][]` for a list of namespaces,
   * `undefined` for a put (a put whose `value` is `null` deletes).
   *
   * @throws {InvalidInput} A malformed operation: a namespace label that is empty or contains
   *   `.`, `:`, NUL or U+001F, an empty namespace on get/put, a value that is not a JSON object,
   *   a negative limit or offset. Nothing of the batch is written.
   * @throws {StoreUnavailable} The store is closed or the file cannot be written (lock timeout,
   *   disk full…). Nothing of the batch is written.
   */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    this.assertOpen();
    if (!this.isSetup && this.options.ensureTables) await this.setup();
    const writes = operations.some((op) => "value" in op);
    const now = new Date().toISOString();
    const run = this.db.transaction((): OpResult[] => operations.map((op): OpResult => this.execute(op, now)));
    let results: OpResult[];
    try {
      results = writes ? run.immediate() : run.deferred();
    } catch (error) {
      throw this.unavailable(error, "batch", { operations: operations.length });
    }
    return results as unknown as OperationResults<Op>;
  }

  /**
   * Compare-and-set (see `./cas.ts`): read the checked rows, compare, and write only when every
   * check holds, in ONE immediate transaction. The write lock is taken before the first read, so
   * of two connections or processes racing on a row, the second reads what the first wrote.
   *
   * @throws {InvalidInput} A malformed check or write. Nothing is written.
   * @throws {StoreUnavailable} The store is closed or the file cannot be written. Nothing is written.
   */
  async compareAndSet(checks: readonly CasCheck[], writes: readonly PutOperation[]): Promise<CasOutcome> {
    this.assertOpen();
    if (!this.isSetup && this.options.ensureTables) await this.setup();
    const now = new Date().toISOString();
    const run = this.db.transaction((): CasOutcome => {
      const items = checks.map((c) => this.getOp({ namespace: c.namespace, key: c.key }));
      const failed = failedChecks(checks, items);
      if (failed.length > 0) return { ok: false, failed };
      for (const write of writes) this.putOp(write, now);
      return { ok: true };
    });
    try {
      return run.immediate();
    } catch (error) {
      throw this.unavailable(error, "compare-and-set", { checks: checks.length, writes: writes.length });
    }
  }

  private execute(op: Operation, now: string): OpResult {
    if ("namespacePrefix" in op) return this.searchOp(op);
    if ("namespace" in op && "value" in op) return this.putOp(op, now);
    if ("namespace" in op && "key" in op) return this.getOp(op);
    if ("matchConditions" in op || "limit" in op || "maxDepth" in op) {
      return this.listNamespacesOp(op);
    }
    throw new InvalidInput("Unknown store operation: expected a get, put, search or list op.", {
      context: { fields: Object.keys(op as object) },
    });
  }

  private getOp(op: GetOperation): Item | null {
    const namespace = encodeNamespace(op.namespace, "get");
    const row = this.statement<[string, string], StoreRow>(
      "SELECT namespace, key, value, created_at, updated_at FROM store WHERE namespace = ? AND key = ?",
    ).get(namespace, op.key);
    return row ? toItem(row) : null;
  }

  private putOp(op: PutOperation, now: string): undefined {
    const namespace = encodeNamespace(op.namespace, "put");
    if (op.value === null) {
      this.statement<[string, string]>("DELETE FROM store WHERE namespace = ? AND key = ?").run(namespace, op.key);
      return undefined;
    }
    const value: unknown = op.value;
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new InvalidInput("A store value must be a JSON object, or null to delete.", {
        context: { namespace: op.namespace, key: op.key, type: typeOf(value) },
      });
    }
    let json: string;
    try {
      json = JSON.stringify(value);
    } catch (error) {
      throw new InvalidInput(
        `Store value at ${JSON.stringify([...op.namespace, op.key])} is not JSON-serialisable: ` +
          `${errorMessage(error)}.`,
        { cause: error, context: { namespace: op.namespace, key: op.key } },
      );
    }
    this.statement<[string, string, string, string, string]>(
      `INSERT INTO store (namespace, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    ).run(namespace, op.key, json, now, now);
    return undefined;
  }

  private searchOp(op: SearchOperation): SqliteSearchItem[] {
    const limit = count(op.limit ?? 10, "limit", true);
    const offset = count(op.offset ?? 0, "offset", false);
    if (limit === 0) return [];
    const prefix = op.namespacePrefix.length ? encodeNamespace(op.namespacePrefix, "search") : undefined;
    const filter = op.filter ?? {};

    const where: string[] = [];
    const params: (string | number)[] = [];
    if (prefix !== undefined) {
      // [p, p + U+0020) holds p and everything under it (plus labels extending the last one with
      // a control character, dropped below): one range scan of the primary key index.
      where.push("namespace >= ? AND namespace < ?");
      params.push(prefix, prefix + UPPER);
    }
    for (const [field, expected] of Object.entries(filter)) {
      const pushed = pushdownEquality(expected);
      if (pushed !== undefined && PUSHDOWN_KEY.test(field)) {
        where.push("json_extract(value, ?) = ?");
        params.push(`$."${field}"`, pushed);
      }
    }
    const sql =
      "SELECT namespace, key, value, created_at, updated_at FROM store" +
      (where.length ? ` WHERE ${where.join(" AND ")}` : "") +
      " ORDER BY namespace, key";

    const hits: SqliteSearchItem[] = [];
    let skipped = 0;
    for (const row of this.statement<(string | number)[], StoreRow>(sql).iterate(...params)) {
      if (prefix !== undefined && row.namespace !== prefix && !row.namespace.startsWith(prefix + SEPARATOR)) {
        continue;
      }
      const item = toItem(row);
      if (!matchesFilter(item.value, filter)) continue;
      if (skipped < offset) {
        skipped += 1;
        continue;
      }
      hits.push(item);
      if (hits.length >= limit) break;
    }
    return hits;
  }

  private listNamespacesOp(op: ListNamespacesOperation): string[][] {
    const limit = count(op.limit ?? Number.POSITIVE_INFINITY, "limit", true);
    const offset = count(op.offset ?? 0, "offset", false);
    const conditions: MatchCondition[] = op.matchConditions ?? [];
    for (const condition of conditions) {
      if (condition.matchType !== "prefix" && condition.matchType !== "suffix") {
        throw new InvalidInput(`Unknown namespace match type ${JSON.stringify(condition.matchType)}.`, {
          context: { matchType: condition.matchType },
        });
      }
      validateLabels(
        condition.path.filter((label) => label !== "*"),
        "listNamespaces",
      );
    }
    const maxDepth = op.maxDepth;
    if (maxDepth !== undefined && !(Number.isInteger(maxDepth) && maxDepth > 0)) {
      throw new InvalidInput("listNamespaces maxDepth must be a positive integer.", {
        context: { maxDepth },
      });
    }

    // The literal labels that lead the first prefix condition bound a range scan.
    const leading: string[] = [];
    const prefixCondition = conditions.find((c) => c.matchType === "prefix");
    for (const label of prefixCondition?.path ?? []) {
      if (label === "*") break;
      leading.push(label);
    }
    let rows: { namespace: string }[];
    if (leading.length) {
      const p = leading.join(SEPARATOR);
      rows = this.statement<[string, string], { namespace: string }>(
        "SELECT DISTINCT namespace FROM store WHERE namespace >= ? AND namespace < ? ORDER BY namespace",
      ).all(p, p + UPPER);
    } else {
      rows = this.statement<[], { namespace: string }>("SELECT DISTINCT namespace FROM store ORDER BY namespace").all();
    }

    const seen = new Set<string>();
    const namespaces: string[][] = [];
    for (const { namespace } of rows) {
      const labels = namespace.split(SEPARATOR);
      if (!conditions.every((c) => matchesCondition(c, labels))) continue;
      const kept = maxDepth === undefined ? labels : labels.slice(0, maxDepth);
      const id = kept.join(SEPARATOR);
      if (seen.has(id)) continue;
      seen.add(id);
      namespaces.push(kept);
    }
    namespaces.sort(compareNamespaces);
    return namespaces.slice(offset, offset + limit);
  }

  /**
   * The rows of exactly `namespace` (not of namespaces under it), highest key first: at most
   * `limit` of them, and only keys after `after`. One range scan of the primary key index,
   * backwards, so the cost is the rows returned, not the rows stored: how the ledger reads the
   * newest records of a tool or a partition (its keys are time-ordered ids).
   *
   * @throws {InvalidInput} A malformed namespace or a negative limit.
   * @throws {StoreUnavailable} The store is closed or the file cannot be read.
   */
  async newestInNamespace(
    namespace: readonly string[],
    options: { limit?: number; after?: string } = {},
  ): Promise<Item[]> {
    this.assertOpen();
    if (!this.isSetup && this.options.ensureTables) await this.setup();
    const ns = encodeNamespace(namespace, "search");
    const limit = count(options.limit ?? Number.POSITIVE_INFINITY, "limit", true);
    if (limit === 0) return [];
    const sql =
      "SELECT namespace, key, value, created_at, updated_at FROM store WHERE namespace = ?" +
      (options.after === undefined ? "" : " AND key > ?") +
      " ORDER BY key DESC" +
      (Number.isFinite(limit) ? " LIMIT ?" : "");
    const params: (string | number)[] = [ns];
    if (options.after !== undefined) params.push(options.after);
    if (Number.isFinite(limit)) params.push(limit);
    try {
      return this.statement<(string | number)[], StoreRow>(sql)
        .all(...params)
        .map(toItem);
    } catch (error) {
      throw this.unavailable(error, "read");
    }
  }

  /**
   * The keys of exactly `namespace` beyond the `keep` highest, ascending: what pruning to the
   * newest `keep` deletes. Read from the primary key index alone (no row is decoded).
   *
   * @throws {InvalidInput} A malformed namespace or a negative `keep`.
   * @throws {StoreUnavailable} The store is closed or the file cannot be read.
   */
  async keysBeyondNewest(namespace: readonly string[], keep: number): Promise<string[]> {
    this.assertOpen();
    if (!this.isSetup && this.options.ensureTables) await this.setup();
    const ns = encodeNamespace(namespace, "search");
    const kept = count(keep, "keep", false);
    try {
      const rows = this.statement<[string, number], { key: string }>(
        "SELECT key FROM store WHERE namespace = ? ORDER BY key DESC LIMIT -1 OFFSET ?",
      ).all(ns, kept);
      return rows.map((r) => r.key).reverse();
    } catch (error) {
      throw this.unavailable(error, "read");
    }
  }

  /**
   * The namespaces exactly one label below `prefix` that hold rows, sorted: one seek of the
   * primary key index per namespace found (a skip scan), so the cost is the namespaces, not the
   * rows under them (`listNamespaces` reads every row's namespace). How the ledger lists the tools
   * of a partition that have calls.
   *
   * @throws {InvalidInput} A malformed prefix.
   * @throws {StoreUnavailable} The store is closed or the file cannot be read.
   */
  async namespacesOneBelow(prefix: readonly string[]): Promise<string[][]> {
    this.assertOpen();
    if (!this.isSetup && this.options.ensureTables) await this.setup();
    const base = encodeNamespace(prefix, "list") + SEPARATOR;
    const upper = base.slice(0, -1) + UPPER;
    const first = this.statement<[string, string], { namespace: string }>(
      "SELECT namespace FROM store WHERE namespace >= ? AND namespace < ? ORDER BY namespace LIMIT 1",
    );
    const out: string[][] = [];
    try {
      // The cursor only grows: past an exact hit by one character, past a deeper one by its label.
      for (let cursor = base; ;) {
        const row = first.get(cursor, upper);
        if (!row) break;
        const label = row.namespace.slice(base.length).split(SEPARATOR, 1)[0];
        if (row.namespace === base + label) {
          out.push([...prefix, label]);
          cursor = `${row.namespace}\u0001`;
        } else {
          cursor = base + label + UPPER;
        }
      }
    } catch (error) {
      throw this.unavailable(error, "read");
    }
    return out;
  }

  private statement<P extends unknown[] = unknown[], R = unknown>(sql: string): Database.Statement<P, R> {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement as unknown as Database.Statement<P, R>;
  }

  /** A SQLite error as {@link StoreUnavailable} (what failed, the file, SQLite's code); any other error as it is. */
  private unavailable(error: unknown, what: string, context: Record<string, unknown> = {}): unknown {
    if (!isSqliteError(error)) return error;
    return new StoreUnavailable(`SQLite ledger ${what} failed: ${errorMessage(error)}.`, {
      cause: error,
      context: { path: this.db.name, code: error.code, ...context },
    });
  }

  /** Opening the file or creating its schema failed: what, where, and what to do about it. */
  private openFailed(doing: string, path: string, error: unknown): StoreUnavailable {
    const advice = isBusy(error)
      ? `Another process held the file's lock for longer than busyTimeoutMs (${this.options.busyTimeoutMs} ms): ` +
        "find the one in a long transaction on it (a long write, a stopped debugger, a sqlite3 shell inside " +
        "BEGIN) and let it finish, or raise busyTimeoutMs."
      : "Check that the path is a writable SQLite file (or a directory that can be created).";
    const context = { path, ...(isSqliteError(error) ? { code: error.code } : {}) };
    return new StoreUnavailable(`Cannot ${doing} ${JSON.stringify(path)}: ${errorMessage(error)}. ${advice}`, {
      cause: error,
      context,
    });
  }

  private assertOpen(): void {
    if (this.isClosed || !this.db.open) {
      throw new StoreUnavailable("The SQLite ledger is closed; open a new SqliteStore.", {
        context: { path: this.db.name },
      });
    }
  }
}

function isSqliteError(error: unknown): error is Error & { code: string } {
  return error instanceof Database.SqliteError;
}
