import { type BaseStore, InMemoryStore } from "@langchain/langgraph";
import { createHmac, randomBytes } from "node:crypto";
import { chmodSync, linkSync, openSync, readFileSync, statSync, unlinkSync, writeSync, closeSync } from "node:fs";
import { ENV_VARIABLES } from "../../env.js";
import { InvalidInput, KeyRequired, StoreUnavailable } from "../../errors.js";
import { META_LABEL } from "../keys.js";
import { type LedgerContext, listNamespace } from "./store-io.js";

/**
 * The key of the ledger's keyed hashes: the fingerprints of argument values and the word tokens
 * of stored free text (`text/fingerprint.ts`, `text/free-text.ts`). Whoever holds it can test a
 * guess ("is this token the word Whitfield?"), so it is never kept where the rows are:
 *
 * 1. the app's secret, `LedgerOptions.secret`, else the environment variable `TOOL_LESSONS_KEY`;
 * 2. else, for a SQLite ledger in a file, a key file beside it, `<ledger file>.key`, made on first
 *    open with mode 0600 (read and written by the owner only), 32 random bytes as hex; every
 *    process that opens the file reads the same key file (made with an atomic link, so two
 *    processes opening a fresh ledger at once agree);
 * 3. else, for a store no other process can reach (LangGraph's `InMemoryStore`, a SQLite
 *    `:memory:` database), a random key made when the process loads this module: every ledger of
 *    the process over such a store agrees, and nothing of it outlives the process;
 * 4. else (Postgres, any other `BaseStore`) the ledger refuses to open: {@link KeyRequired}.
 *
 * Each partition hashes with its own key, HMAC-SHA256 of the secret over a label and the
 * partition ({@link LedgerKeys.partitionKey}), so the partition is part of every MAC: the same word
 * gives different tokens in two partitions, one partition's released words cannot read another's
 * tokens, and no token links two callers' partitions.
 *
 * Ledgers written before this rule kept their key in the store (`[root, "~meta"]`,
 * `"fingerprint-key"`, and candidate rows under it). The first key use of a ledger deletes those
 * rows ({@link dropStoredKey}); tokens and fingerprints stored under the old key no longer link with
 * new ones (see CHANGELOG.md and docs/security.md, "Key handling").
 */

/** Suffix of the key file beside a SQLite ledger file. */
export const KEY_FILE_SUFFIX = ".key";

/** Shortest app secret accepted, in characters. */
export const MIN_SECRET_LENGTH = 16;

/**
 * A store whose rows live in one file, beside which the ledger keeps its key when the app gives
 * none (`SqliteStore`): `ledgerKeyFile` is that key file's path, or `undefined` for a database no
 * other process can open (`:memory:`, a temporary one).
 */
export interface KeyFileStore {
  readonly ledgerKeyFile: string | undefined;
}

/** Where a ledger's secret came from. */
export type KeySource = "option" | "env" | "file" | "process";

/** What {@link resolveLedgerKeys} reads. */
export interface KeyInputs {
  /** The app's secret (`LedgerOptions.secret`). */
  secret?: string;
  /** The secret from the environment (`TOOL_LESSONS_KEY`, read by `readEnv`). */
  envSecret?: string;
}

/**
 * Made once when the module loads and never changed: the key of stores no other process reaches.
 * Module-level, but not mutable state: every ledger of the process over such a store must agree
 * on it, and nothing can write it.
 */
const PROCESS_SECRET: string = randomBytes(32).toString("hex");

const PARTITION_LABEL = "tool-lessons/partition-key/v1\u0000";

/** The secret of one ledger, and the keys of its partitions. Held on the ledger's context. */
export class LedgerKeys {
  /** A `#` field: not printed by `console.log` or `util.inspect`, nor serialised. */
  readonly #secret: string;
  /** Where the secret came from (never the secret itself). */
  readonly source: KeySource;
  private dropped: Promise<void> | undefined;

  constructor(secret: string, source: KeySource) {
    this.#secret = secret;
    this.source = source;
  }

  /**
   * The key a partition's keyed hashes use: 64 hex digits of HMAC-SHA256 of the ledger's secret
   * over a label and the partition key. Deterministic, so every process with the secret agrees.
   */
  partitionKey(partition: string): string {
    return createHmac("sha256", this.#secret).update(PARTITION_LABEL).update(partition).digest("hex");
  }

  /** {@link dropStoredKey}, once per ledger. Never rejects. */
  dropStoredKeyOnce(ctx: LedgerContext): Promise<void> {
    this.dropped ??= dropStoredKey(ctx);
    return this.dropped;
  }

  /** Never printed: a log line or an error's context holds where the key came from, not the key. */
  toJSON(): { source: KeySource } {
    return { source: this.source };
  }
}

/**
 * The keys of a ledger over `store`, by the order in the module comment.
 * @throws InvalidInput when the secret given is shorter than {@link MIN_SECRET_LENGTH} characters
 * @throws KeyRequired for a store with no key file that another process may share (Postgres, a store of your own)
 * @throws StoreUnavailable when the key file cannot be read or made, or is readable by others
 */
export function resolveLedgerKeys(store: BaseStore, inputs: KeyInputs): LedgerKeys {
  if (inputs.secret !== undefined)
    return new LedgerKeys(checkedSecret(inputs.secret, "the ledger's `secret` option"), "option");
  if (inputs.envSecret !== undefined)
    return new LedgerKeys(checkedSecret(inputs.envSecret, ENV_VARIABLES.ledgerKey), "env");
  if (isKeyFileStore(store)) {
    const file = store.ledgerKeyFile;
    return file === undefined ? new LedgerKeys(PROCESS_SECRET, "process") : new LedgerKeys(keyFromFile(file), "file");
  }
  if (store instanceof InMemoryStore) return new LedgerKeys(PROCESS_SECRET, "process");
  throw keyRequired(store.constructor?.name ?? "a BaseStore");
}

/**
 * The error of a ledger opened over a store with no key file and no secret (Postgres, a store of
 * your own), saying how to give one. `store` names the kind of store, never its address.
 */
export function keyRequired(store: string): KeyRequired {
  return new KeyRequired(
    `This ledger's store (${store}) keeps no file beside which a key could be kept, and the key of its ` +
      "fingerprints and word tokens must not live in the store itself. Give the app's secret: set " +
      `${ENV_VARIABLES.ledgerKey} (at least ${MIN_SECRET_LENGTH} characters, e.g. \`openssl rand -hex 32\`), or pass ` +
      "{ secret } to openLedger, new Ledger(store, { secret }) or PostgresLedger.fromConnString(url, { secret }). " +
      "Every process of the ledger must use the same secret.",
    { context: { store } },
  );
}

function isKeyFileStore(store: BaseStore): store is BaseStore & KeyFileStore {
  return "ledgerKeyFile" in store;
}

function checkedSecret(secret: unknown, from: string): string {
  if (typeof secret !== "string" || secret.length < MIN_SECRET_LENGTH) {
    throw new InvalidInput(
      `The ledger's secret (${from}) must be a string of at least ${MIN_SECRET_LENGTH} characters, e.g. the ` +
        "output of `openssl rand -hex 32`.",
      { context: { from } },
    );
  }
  return secret;
}

const KEY_FILE_TEXT = /^[0-9a-f]{64}$/;

/**
 * The key in a SQLite ledger's key file, made when missing: written to a private temporary file
 * (mode 0600), then linked to its name, which fails if another process made it first (its key is
 * then read): no process ever reads a half-written key.
 */
function keyFromFile(file: string): string {
  const existing = readKeyFile(file);
  if (existing !== undefined) return existing;
  const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    const fd = openSync(temp, "wx", 0o600);
    try {
      writeSync(fd, `${randomBytes(32).toString("hex")}\n`);
    } finally {
      closeSync(fd);
    }
    chmodSync(temp, 0o600);
    try {
      linkSync(temp, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  } catch (error) {
    throw new StoreUnavailable(
      `The ledger's key file could not be made beside the SQLite file (${file}): make its directory writable, ` +
        `or give the app's secret (${ENV_VARIABLES.ledgerKey}, or the \`secret\` option).`,
      { cause: error, context: { file } },
    );
  } finally {
    try {
      unlinkSync(temp);
    } catch {
      // Not made, or already gone.
    }
  }
  const made = readKeyFile(file);
  if (made === undefined) {
    throw new StoreUnavailable(`The ledger's key file (${file}) could not be read back after it was made.`, {
      context: { file },
    });
  }
  return made;
}

/** The key of an existing key file, `undefined` when there is none. */
function readKeyFile(file: string): string | undefined {
  let text: string;
  try {
    const stat = statSync(file);
    if (process.platform !== "win32" && (stat.mode & 0o077) !== 0) {
      throw new StoreUnavailable(
        `The ledger's key file (${file}) can be read by other users (mode ${(stat.mode & 0o777).toString(8)}); ` +
          `whoever reads it can test guesses against the stored tokens. Run \`chmod 600 ${file}\`.`,
        { context: { file } },
      );
    }
    text = readFileSync(file, "utf8").trim();
  } catch (error) {
    if (error instanceof StoreUnavailable) throw error;
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new StoreUnavailable(`The ledger's key file (${file}) could not be read.`, {
      cause: error,
      context: { file },
    });
  }
  if (!KEY_FILE_TEXT.test(text)) {
    throw new StoreUnavailable(
      `The ledger's key file (${file}) does not hold a key (64 hex digits). Restore it from a backup: a new key ` +
        "means the stored tokens no longer link with new ones (delete it only to start over).",
      { context: { file } },
    );
  }
  return text;
}

/**
 * Delete the key rows a ledger written before the key left the store keeps (`[root, "~meta"]`,
 * `"fingerprint-key"`, and `[root, "~meta", "fingerprint-key-candidates"]`), so the store no longer
 * holds what turns its old tokens back into words. A failure is reported (`legacy_key_kept`) and
 * tried again by the next ledger opened; it never fails the caller.
 */
async function dropStoredKey(ctx: LedgerContext): Promise<void> {
  const { store, root } = ctx;
  const ns = [root, META_LABEL];
  const candidates = [root, META_LABEL, "fingerprint-key-candidates"];
  try {
    const [row, proposals] = await Promise.all([store.get(ns, "fingerprint-key"), listNamespace(ctx, candidates)]);
    if (row === null && proposals.length === 0) return;
    await store.batch([
      ...(row === null ? [] : [{ namespace: ns, key: "fingerprint-key", value: null }]),
      ...proposals.map((item) => ({ namespace: candidates, key: item.key, value: null })),
    ]);
  } catch (error) {
    ctx.report(
      "legacy_key_kept",
      "The key row an older version of the ledger kept in the store could not be deleted; it is tried again " +
        "when a ledger is next opened. Until then the store still holds the key of the tokens written before.",
      { namespace: ns.join("/") },
      error,
    );
  }
}
