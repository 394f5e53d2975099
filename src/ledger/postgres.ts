import type { Item, Operation, OperationResults, PutOperation } from "@langchain/langgraph";
import { PostgresStore, type SearchItem } from "@langchain/langgraph-checkpoint-postgres/store";
import { InvalidInput } from "../errors.js";
import { isRecord, redactUrl } from "../internal.js";
import { type CasCheck, type CasOutcome, type CompareAndSetStore, failedChecks, localCompareAndSet } from "./cas.js";
import { Ledger, type LedgerOptions } from "./ledger.js";
import { setUp } from "./postgres-setup.js";
import { isUniqueViolation, ROWS_PER_STATEMENT, writeRows } from "./postgres-rows.js";

/**
 * The scale-out ledger backend: LangGraph's own `PostgresStore`, shared by any number of agent
 * processes on any number of machines. Import from `tool-lessons/postgres` (it needs the
 * optional peer `@langchain/langgraph-checkpoint-postgres`).
 *
 * The store is opened **without** a vector `index`: the ledger needs none (routing and lesson
 * retrieval live in the index, e.g. Chroma), and Debian's PostgreSQL has no pgvector.
 *
 * @module
 */

export { PostgresStore };

/** The parts of `pg` this module uses, so it needs no `pg` types. */
interface PgClient {
  query(text: string, values?: unknown[]): Promise<{ rows: StoreRow[] }>;
  release(error?: Error | boolean): void;
}
interface PgPool {
  connect(): Promise<PgClient>;
  on(event: "error", listener: (error: Error) => void): unknown;
  on(event: "connect", listener: (client: { on(event: "error", listener: () => void): unknown }) => void): unknown;
}
interface StoreRow {
  namespace_path: string;
  key: string;
  value: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

/** A row of the store table as the `Item` `PostgresStore` itself returns. */
function itemOfRow(row: StoreRow): SearchItem {
  return {
    namespace: row.namespace_path.split(":"),
    key: row.key,
    value: row.value,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
/** `PostgresStore`'s private `core`: its pool, schema and (absent here) vector and TTL config. */
interface StoreCore {
  pool: PgPool;
  schema: string;
  indexConfig?: unknown;
  ttlConfig?: unknown;
}

/**
 * A `PostgresStore` whose write-only batches (puts and deletes) run as **one transaction** of
 * at most two statements (up to 21,845 puts), instead of one autocommitted statement per
 * operation:
 *
 * - `Ledger.commit()` (cards with their revisions) is atomic: all of it or none of it;
 * - `Ledger.appendRuns()` (runs' calls with their turns) is atomic the same way;
 * - appending N records costs one round trip and one commit (one WAL flush) instead of N: a
 *   batch of puts alone is a single `INSERT … ON CONFLICT` statement, its own transaction, sent
 *   without `BEGIN` / `COMMIT`; the ledger's new records ({@link appendNew}) a plain `INSERT`.
 *
 * A plain listing (`search` without `query` or `filter`) is ordered by `updated_at` **then
 * namespace and key**, so paging with `offset` neither skips nor repeats rows that share a
 * timestamp (every row of one transaction does; `PostgresStore` breaks no ties).
 *
 * Everything else (gets, filtered or text searches, mixed batches, puts with a TTL, stores with
 * a vector index) is `PostgresStore`'s own code. The fast path reaches into `PostgresStore`'s pool;
 * should a future version of `@langchain/langgraph-checkpoint-postgres` change that, batches
 * fall back to `PostgresStore.batch` (correct, but neither atomic nor fast).
 * {@link TransactionalPostgresStore.atomicBatches} says which applies.
 *
 * Semantics match applying the operations in order: for a (namespace, key) written twice in
 * one batch, the last write wins.
 */
export class TransactionalPostgresStore extends PostgresStore implements CompareAndSetStore {
  /**
   * Where this store connects, when `openPostgresStore` or `PostgresLedger` made it: how a
   * recorder's write thread opens its own pool on the same tables (`writeThread`).
   */
  connection: PostgresConnection | undefined;

  /** True when write-only batches run as one transaction (see the class docs). */
  get atomicBatches(): boolean {
    const core = coreOf(this);
    return core !== undefined && core.indexConfig == null && core.ttlConfig == null;
  }

  override async search(
    namespacePrefix: string[],
    options: Parameters<PostgresStore["search"]>[1] = {},
  ): Promise<SearchItem[]> {
    const core = coreOf(this);
    const plain =
      options.query === undefined && (options.filter === undefined || Object.keys(options.filter).length === 0);
    if (core === undefined || !this.atomicBatches || !plain || options.refreshTtl) {
      return super.search(namespacePrefix, options);
    }
    checkLabels(namespacePrefix);
    await this.start();
    const client = await core.pool.connect();
    try {
      const { rows } = await client.query(
        `SELECT namespace_path, key, value, created_at, updated_at FROM "${core.schema}".store
         WHERE namespace_path LIKE $1 AND (expires_at IS NULL OR expires_at > CURRENT_TIMESTAMP)
         ORDER BY updated_at DESC, namespace_path, key LIMIT $2 OFFSET $3`,
        [`${namespacePrefix.join(":")}%`, options.limit ?? 10, options.offset ?? 0],
      );
      return rows.map(itemOfRow);
    } finally {
      client.release();
    }
  }

  override async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const core = coreOf(this);
    if (
      operations.length < 2 ||
      !this.atomicBatches ||
      core === undefined ||
      !operations.every((op): op is PutOperation & Op[number] => isPlainPut(op))
    ) {
      return super.batch(operations);
    }
    await this.writeAtomically(core, operations, "upsert");
    return operations.map(() => undefined) as OperationResults<Op>;
  }

  /**
   * Append rows under keys that are not stored yet (the ledger's time-ordered ids): ONE plain
   * multi-row `INSERT`, the statement a raw insert of the same rows is, without the per-row
   * conflict check of `ON CONFLICT` (with it, 1.22× the server's time on a batch of 498 records;
   * docs/benchmarks.md, "Recording under load"). A key that is stored already (the retry of a
   * write whose commit landed but whose answer was lost) fails the statement whole, nothing
   * written, and the rows are then written as puts ({@link batch}): the stored ones overwritten
   * with the same values, none doubled. Postgres logs that failed statement (a unique violation)
   * in its server log.
   *
   * Without the fast path (see {@link atomicBatches}), or for TTL puts, it is {@link batch}.
   * @throws InvalidInput for a namespace label `PostgresStore` refuses; the driver's error when
   *   the server refuses a row (nothing of the batch is written).
   */
  async appendNew(puts: readonly PutOperation[]): Promise<void> {
    if (puts.length === 0) return;
    const core = coreOf(this);
    if (core === undefined || !this.atomicBatches || !puts.every((op) => isPlainPut(op) && op.value !== null)) {
      await this.batch([...puts]);
      return;
    }
    try {
      await this.writeAtomically(core, puts, "insert");
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      await this.batch([...puts]);
    }
  }

  /**
   * Plain puts and deletes in one transaction: puts alone (as many as one statement takes) are a
   * single statement, which Postgres runs as its own transaction; anything else is wrapped in
   * `BEGIN` / `COMMIT`. `insert`: the puts are new rows (see {@link appendNew}).
   */
  private async writeAtomically(
    core: StoreCore,
    operations: readonly PutOperation[],
    mode: "upsert" | "insert",
  ): Promise<void> {
    for (const op of operations) checkLabels(op.namespace);
    await this.start();

    // Last write per (namespace, key) wins; rows in a fixed order so concurrent batches that
    // touch the same rows lock them in the same order (no deadlock).
    const last = new Map<string, PutOperation>();
    for (const op of operations) last.set(`${op.namespace.join(":")}\u0000${op.key}`, op);
    const rows = [...last.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, op]) => op);
    const table = `"${core.schema}".store`;

    const client = await core.pool.connect();
    let broken: Error | undefined;
    // Puts alone are one INSERT statement, which Postgres runs as its own transaction: one round
    // trip, where BEGIN / INSERT / COMMIT take three (each waits for a turn of a busy event loop).
    const oneStatement = rows.length <= ROWS_PER_STATEMENT && rows.every((op) => op.value !== null);
    try {
      if (oneStatement) {
        await writeRows(client, table, rows, mode);
        return;
      }
      await client.query("BEGIN");
      await writeRows(client, table, rows, mode);
      await client.query("COMMIT");
    } catch (error) {
      if (oneStatement) throw error;
      await client.query("ROLLBACK").catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw error;
    } finally {
      // A connection whose ROLLBACK failed is discarded, not returned to the pool mid-transaction.
      client.release(broken ?? false);
    }
  }

  /**
   * Compare-and-set (see `./cas.ts`) in ONE transaction: a transaction-scoped advisory lock on
   * every checked and written row (taken in a fixed order, so two of them cannot deadlock; a row
   * that does not exist yet is locked too, which `SELECT … FOR UPDATE` would not do), then the
   * checked rows are read, compared, and the writes made only when every check holds. Of two
   * processes racing on a row, the second reads what the first committed. Without the fast path
   * (see {@link atomicBatches}) it is settled in this process only.
   */
  async compareAndSet(checks: readonly CasCheck[], writes: readonly PutOperation[]): Promise<CasOutcome> {
    const core = coreOf(this);
    if (core === undefined || !this.atomicBatches || !writes.every((op) => isPlainPut(op))) {
      return localCompareAndSet(this, checks, writes);
    }
    for (const c of checks) checkLabels(c.namespace);
    for (const op of writes) checkLabels(op.namespace);
    await this.start();
    const table = `"${core.schema}".store`;
    const rowKey = (namespace: string[], key: string): string => `${namespace.join(":")}\u0000${key}`;
    // Postgres text holds no NUL: the lock names are JSON. A hash collision only serialises more.
    const locks = [...new Set([...checks, ...writes].map((r) => JSON.stringify([r.namespace, r.key])))].sort();
    const last = new Map<string, PutOperation>();
    for (const op of writes) last.set(rowKey(op.namespace, op.key), op);
    const rows = [...last.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, op]) => op);

    const client = await core.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query("BEGIN");
      for (const lock of locks) await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 7215))", [lock]);
      const found = new Map<string, StoreRow>();
      if (checks.length > 0) {
        const { rows: current } = await client.query(
          `SELECT namespace_path, key, value, created_at, updated_at FROM ${table}
           WHERE (namespace_path, key) IN (SELECT * FROM unnest($1::text[], $2::text[]))
             AND (expires_at IS NULL OR expires_at > CURRENT_TIMESTAMP)`,
          [checks.map((c) => c.namespace.join(":")), checks.map((c) => c.key)],
        );
        for (const row of current) found.set(`${row.namespace_path}\u0000${row.key}`, row);
      }
      const items = checks.map((c) => {
        const row = found.get(rowKey(c.namespace, c.key));
        return row
          ? {
              namespace: c.namespace,
              key: c.key,
              value: row.value,
              createdAt: row.created_at,
              updatedAt: row.updated_at,
            }
          : null;
      });
      const failed = failedChecks(checks, items);
      if (failed.length > 0) {
        await client.query("ROLLBACK");
        return { ok: false, failed };
      }
      await writeRows(client, table, rows, "upsert");
      await client.query("COMMIT");
      return { ok: true };
    } catch (error) {
      await client.query("ROLLBACK").catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw error;
    } finally {
      client.release(broken ?? false);
    }
  }

  /**
   * The rows of exactly `namespace` (not of namespaces under it), highest key first: at most
   * `limit`, only keys after `after`. A backward scan of the `(namespace_path, key)` primary key,
   * so the cost is the rows returned, not the rows stored: how the ledger reads the newest
   * records of a tool or a partition (their keys are time-ordered ids, which sort the same under
   * any collation). Without the pool (see the class docs), a full listing of the namespace.
   */
  async newestInNamespace(namespace: string[], options: { limit?: number; after?: string } = {}): Promise<Item[]> {
    const core = coreOf(this);
    const limit = options.limit ?? null;
    if (limit === 0) return [];
    if (core === undefined) {
      const all = (await super.search(namespace, { limit: Number.MAX_SAFE_INTEGER })).filter(
        (item) =>
          item.namespace.length === namespace.length &&
          item.namespace.every((label, i) => label === namespace[i]) &&
          (options.after === undefined || item.key > options.after),
      );
      all.sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
      return limit === null ? all : all.slice(0, limit);
    }
    checkLabels(namespace);
    await this.start();
    const client = await core.pool.connect();
    let rows: StoreRow[];
    try {
      ({ rows } = await client.query(
        // `key > $3` only when asked: as a bound of the index scan, not a filter of every row.
        `SELECT namespace_path, key, value, created_at, updated_at FROM "${core.schema}".store
         WHERE namespace_path = $1${options.after === undefined ? "" : " AND key > $3"}
           AND (expires_at IS NULL OR expires_at > CURRENT_TIMESTAMP)
         ORDER BY key DESC LIMIT $2`,
        options.after === undefined ? [namespace.join(":"), limit] : [namespace.join(":"), limit, options.after],
      ));
    } finally {
      client.release();
    }
    return rows.map(itemOfRow);
  }

  /**
   * The keys of exactly `namespace` beyond the `keep` highest, ascending: what pruning to the
   * newest `keep` deletes. Read through the primary key (no value is read).
   */
  async keysBeyondNewest(namespace: string[], keep: number): Promise<string[]> {
    const core = coreOf(this);
    if (core === undefined)
      return (await this.newestInNamespace(namespace))
        .slice(keep)
        .map((item) => item.key)
        .reverse();
    checkLabels(namespace);
    await this.start();
    const client = await core.pool.connect();
    try {
      const { rows } = await client.query(
        `SELECT key FROM "${core.schema}".store WHERE namespace_path = $1 ORDER BY key DESC OFFSET $2`,
        [namespace.join(":"), keep],
      );
      return rows.map((row) => row.key).reverse();
    } finally {
      client.release();
    }
  }
}

/** Where a {@link TransactionalPostgresStore} connects: enough to open another pool on its tables. */
export interface PostgresConnection {
  connectionString: string;
  schema: string;
}

/** Options of {@link openPostgresStore}. */
export interface OpenPostgresStoreOptions {
  /**
   * Postgres schema holding the store's tables (`store`, `store_migrations`); created if
   * missing. Give each application (or test run) its own to keep them apart. A plain
   * identifier: letters, digits, `_`, `$`, at most 63 bytes, not starting with a digit.
   * @default "public"
   */
  schema?: string;
  /**
   * How long to wait for a connection before giving up, in milliseconds.
   * @default 10000
   */
  connectionTimeoutMs?: number;
  /**
   * Most connections the store's pool opens at once.
   * @default 10
   */
  maxConnections?: number;
  /**
   * Receives errors of idle pooled connections (the server restarted, a connection was
   * killed). The pool drops such a connection and opens a new one on next use; without a
   * listener Node would crash the process on the pool's `error` event.
   * @default console.warn with a "[tool-lessons]" prefix
   */
  onIdleError?: (error: Error) => void;
}

/** Defaults of {@link OpenPostgresStoreOptions}. */
const DEFAULT_POSTGRES_STORE_OPTIONS = {
  schema: "public",
  connectionTimeoutMs: 10_000,
  maxConnections: 10,
  onIdleError: (error: Error) =>
    console.warn(`[tool-lessons] An idle Postgres ledger connection failed (it will be replaced): ${error.message}`),
} satisfies Required<OpenPostgresStoreOptions>;

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

/**
 * Open a `PostgresStore` and run its migrations, ready for `new Ledger(store)`,
 * `openLedger({ store })` or `graph.compile({ store })`.
 *
 * Close it with `store.stop()` (or `ledger.close()` when `openLedger` opened it).
 *
 * @param connectionString e.g. `postgresql://user:password@host:5432/database`.
 * @param options See {@link OpenPostgresStoreOptions}.
 * @returns A set-up store.
 * @throws InvalidInput for a malformed connection string or schema name.
 * @throws StoreUnavailable when the server cannot be reached or the schema cannot be created;
 *   the message says how to start or point at a server. Its `cause` is the driver's error.
 *
 * @example
 * ```ts
 * import { openPostgresStore } from "tool-lessons/postgres";
 * const store = await openPostgresStore(process.env.DATABASE_URL!, { schema: "agents" });
 * const ledger = await openLedger({ store });
 * const graph = builder.compile({ store }); // the graph's long-term memory and the ledger share it
 * ```
 */
export async function openPostgresStore(
  connectionString: string,
  options: OpenPostgresStoreOptions = {},
): Promise<PostgresStore> {
  const store = newStore(connectionString, options);
  await setUp(store, connectionString, options.schema ?? DEFAULT_POSTGRES_STORE_OPTIONS.schema);
  return store;
}

/** Options of {@link PostgresLedger.fromConnString}: the store's ({@link OpenPostgresStoreOptions}) and the ledger's. */
export interface PostgresLedgerOptions extends OpenPostgresStoreOptions, Omit<LedgerOptions, "ownsStore"> {}

/**
 * A ledger on Postgres, made the way LangGraph users make a `PostgresStore`: a static
 * `fromConnString` that opens nothing yet, and an explicit `setup()` that runs the migrations.
 *
 * `setup()` is idempotent and safe when many processes start at once on a fresh schema (the
 * races Postgres' `CREATE … IF NOT EXISTS` has are retried), and a server that cannot be reached
 * fails it with `StoreUnavailable` saying how to fix it. Skipped, the store sets itself up at its
 * first use, as `PostgresStore` does, without those retries; so call it at startup.
 *
 * The ledger owns its store: `close()` ends the pool. `ledger.store` is a `PostgresStore`, so the
 * graph can share it: `graph.compile({ store: ledger.store })`. Beside it, `openLedger({ postgresUrl })`
 * does both steps in one call.
 *
 * @example
 * ```ts
 * import { PostgresLedger } from "tool-lessons/postgres";
 * const ledger = PostgresLedger.fromConnString(process.env.DATABASE_URL!, { schema: "agents" });
 * await ledger.setup();
 * const graph = builder.compile({ store: ledger.store });
 * // ...
 * await ledger.close();
 * ```
 */
export class PostgresLedger extends Ledger {
  declare readonly store: TransactionalPostgresStore;
  private readonly connectionString: string;
  private readonly schema: string;
  private settingUp: Promise<void> | undefined;

  private constructor(store: TransactionalPostgresStore, connectionString: string, options: PostgresLedgerOptions) {
    const {
      schema,
      connectionTimeoutMs: _timeout,
      maxConnections: _max,
      onIdleError: _onIdle,
      ...ledgerOptions
    } = options;
    super(store, { ...ledgerOptions, ownsStore: true });
    this.connectionString = connectionString;
    this.schema = schema ?? DEFAULT_POSTGRES_STORE_OPTIONS.schema;
  }

  /**
   * A ledger on the database at `connectionString`; nothing is opened until {@link setup} (or the
   * first read or write).
   * @throws InvalidInput for a malformed connection string or schema name.
   */
  static fromConnString(connectionString: string, options: PostgresLedgerOptions = {}): PostgresLedger {
    return new PostgresLedger(newStore(connectionString, options), connectionString, options);
  }

  /**
   * Create the schema and the store's tables if missing (migrations). Idempotent; concurrent calls
   * share one run, and a failed run is tried afresh by the next call.
   * @throws StoreUnavailable when the server cannot be reached or the schema cannot be created.
   */
  async setup(): Promise<void> {
    this.settingUp ??= setUp(this.store, this.connectionString, this.schema, { stopOnFailure: false }).catch(
      (error: unknown) => {
        this.settingUp = undefined;
        throw error;
      },
    );
    return this.settingUp;
  }
}

/**
 * A `TransactionalPostgresStore` for `connectionString`, not yet connected.
 * @throws InvalidInput for a malformed connection string or schema name.
 */
function newStore(connectionString: string, options: OpenPostgresStoreOptions): TransactionalPostgresStore {
  if (!/^postgres(ql)?:\/\//.test(connectionString)) {
    throw new InvalidInput(
      `Not a Postgres connection string: ${JSON.stringify(redactUrl(connectionString))}. ` +
        "Expected postgresql://user:password@host:5432/database.",
    );
  }
  const schema = options.schema ?? DEFAULT_POSTGRES_STORE_OPTIONS.schema;
  if (!SCHEMA_NAME.test(schema)) {
    throw new InvalidInput(
      `Invalid Postgres schema name ${JSON.stringify(schema)}: use letters, digits, "_" or "$" ` +
        "(at most 63, not starting with a digit).",
      { context: { schema } },
    );
  }
  const store = new TransactionalPostgresStore({
    connectionOptions: {
      connectionString,
      connectionTimeoutMillis: options.connectionTimeoutMs ?? DEFAULT_POSTGRES_STORE_OPTIONS.connectionTimeoutMs,
      max: options.maxConnections ?? DEFAULT_POSTGRES_STORE_OPTIONS.maxConnections,
    },
    schema,
  });
  listenForIdleErrors(store, options.onIdleError ?? DEFAULT_POSTGRES_STORE_OPTIONS.onIdleError);
  store.connection = { connectionString, schema };
  return store;
}

/**
 * `PostgresStore` keeps its `pg.Pool` private and attaches no `error` listener, so an idle
 * connection dropped by the server (restart, `pg_terminate_backend`, a network blip) would
 * crash the process. Listen through the private field when it has the expected shape.
 */
function listenForIdleErrors(store: PostgresStore, onError: (error: Error) => void): void {
  const pool = coreOf(store)?.pool;
  pool?.on("error", onError);
  // A checked-out connection the server drops between two queries emits `error` on itself, where
  // the pool does not listen: without a listener that crashes the process. Its next query fails
  // (the caller sees that) and the pool discards it, so nothing more is needed here.
  pool?.on("connect", (client) => client.on("error", () => undefined));
}

/** `PostgresStore`'s private core, when it has the shape this module was written against. */
function coreOf(store: PostgresStore): StoreCore | undefined {
  const core: unknown = (store as unknown as Record<string, unknown>)["core"];
  if (!isRecord(core) || typeof core["schema"] !== "string") return undefined;
  const pool = core["pool"];
  if (!isRecord(pool) || typeof pool["connect"] !== "function" || typeof pool["on"] !== "function") return undefined;
  return core as unknown as StoreCore;
}

/** A put or delete without per-item TTL or index fields: what the transactional path writes. */
function isPlainPut(op: Operation): op is PutOperation {
  if (!("value" in op) || !("key" in op)) return false;
  // PostgresStore.put passes `options: { ttl }` along with the operation.
  const options: unknown = (op as unknown as Record<string, unknown>)["options"];
  return !isRecord(options) || options["ttl"] === undefined;
}

/** The label checks `PostgresStore` makes on every put (it matches prefixes with `LIKE`). */
function checkLabels(namespace: string[]): void {
  if (namespace.length === 0) throw new InvalidInput("A Postgres store namespace cannot be empty.");
  for (const label of namespace) {
    if (typeof label !== "string" || label === "" || /[.:%_\\\0]/.test(label)) {
      throw new InvalidInput(
        `Invalid namespace label ${JSON.stringify(label)}: PostgresStore labels are non-empty and contain no ` +
          "'.', ':', '%', '_', '\\' or NUL (encode names with encodeLabel).",
        { context: { label: String(label) } },
      );
    }
  }
  if (namespace[0] === "langgraph") throw new InvalidInput('The root namespace label "langgraph" is reserved.');
}
