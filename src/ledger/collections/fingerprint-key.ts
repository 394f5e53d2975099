import { type BaseStore, InMemoryStore, type Item } from "@langchain/langgraph";
import { randomBytes } from "node:crypto";
import { StoreUnavailable } from "../../errors.js";
import { compareAndSet, settlesCas } from "../cas.js";
import { META_LABEL, timeOrderedId } from "../keys.js";
import { type LedgerContext, listNamespace } from "./store-io.js";

/**
 * How long a process that proposed the first fingerprint key waits for other processes'
 * proposals still being written before choosing among them, on a store that has no
 * compare-and-set of its own. Longer than any store write.
 */
export const KEY_SETTLE_MS = 250;

/**
 * The key of the keyed hashes (fingerprints) of argument values, agreed on once per ledger and
 * stored in it, so every process that records or vets against the ledger uses the same one.
 *
 * Key layout (ledger-wide, outside every partition):
 * - `[root, "~meta"]`, key `"fingerprint-key"` → `{ key }` (64 hex digits): the agreed key;
 * - `[root, "~meta", "fingerprint-key-candidates"]`, key = time-ordered id → `{ key }`: one
 *   candidate per process that found no key.
 *
 * The protocol, on a store where a put-if-absent holds for every writer of the ledger (one that
 * settles compare-and-set itself, `SqliteStore` and `openPostgresStore`'s, across processes; an
 * `InMemoryStore`, which no other process can reach, under the ledger's in-process lock): the
 * process that finds no key proposes the earliest candidate, or a fresh key written as a
 * candidate, and stores it only if no key row is there; one that finds it there adopts it. No
 * wait: a fresh ledger's key is there as soon as the store has answered (a few writes).
 *
 * On any other `BaseStore`, which has no compare-and-set, each process that finds no key writes
 * a candidate under its own row, waits {@link KEY_SETTLE_MS} for candidates still in flight, and
 * every process adopts the same one (earliest `createdAt`, then smallest row key), which it then
 * stores as the ledger's key. Only the first use of a ledger pays the wait. (The recorder asks
 * for the key when it is made, so that its first records do not wait for it.)
 *
 * Invariants:
 * - once stored, the key never changes; candidates are never deleted (a lost or corrupt key row
 *   is re-agreed from them, and the earliest candidate wins again);
 * - a row without a non-empty string `key` counts as absent; nothing is counted or warned;
 * - read once per `Ledger` object; a failed read is not cached, the next call tries again.
 */
export class FingerprintKey {
  private loading: Promise<string> | undefined;

  constructor(private readonly ctx: LedgerContext) {}

  /** @throws StoreUnavailable when the agreed key cannot be read back. */
  async get(): Promise<string> {
    this.loading ??= this.load().catch((error: unknown) => {
      this.loading = undefined;
      throw error;
    });
    return this.loading;
  }

  private async load(): Promise<string> {
    const { store, root } = this.ctx;
    const ns = [root, META_LABEL];
    const stored = keyOf(await store.get(ns, "fingerprint-key"));
    if (stored) return stored;

    const candidates = [root, META_LABEL, "fingerprint-key-candidates"];
    if (agreesAtOnce(store)) {
      const agreed = await this.agreeAtOnce(ns, candidates);
      if (agreed) return agreed;
    }
    await store.put(candidates, timeOrderedId(), { key: randomBytes(32).toString("hex") }, false);
    await new Promise((resolve) => setTimeout(resolve, KEY_SETTLE_MS));
    // A process that settled before this one wrote its candidate already stored the winner.
    const settled = keyOf(await store.get(ns, "fingerprint-key"));
    if (settled) return settled;
    const key = keyOf(earliest(await listNamespace(this.ctx, candidates)));
    if (!key) throw new StoreUnavailable("The ledger's fingerprint key could not be read back from the store.");
    await store.put(ns, "fingerprint-key", { key }, false);
    return key;
  }

  /**
   * Put-if-absent of the key row: the earliest candidate (a key row lost or corrupt is re-agreed
   * from them, as in the other protocol), else a fresh key, stored as a candidate first. The key
   * stored, or undefined when the row there holds no usable key (the other protocol then settles it).
   */
  private async agreeAtOnce(ns: string[], candidates: string[]): Promise<string | undefined> {
    const { store } = this.ctx;
    let proposal = keyOf(earliest(await listNamespace(this.ctx, candidates)));
    if (proposal === undefined) {
      proposal = randomBytes(32).toString("hex");
      await store.put(candidates, timeOrderedId(), { key: proposal }, false);
    }
    const outcome = await compareAndSet(
      store,
      [{ namespace: ns, key: "fingerprint-key", field: "key", oneOf: [null] }],
      [{ namespace: ns, key: "fingerprint-key", value: { key: proposal }, index: false }],
    );
    if (outcome.ok) return proposal;
    return keyOf(outcome.failed[0]?.item);
  }
}

/** A store where a put-if-absent holds for every writer of the ledger (see the protocol above). */
function agreesAtOnce(store: BaseStore): boolean {
  return settlesCas(store) || store instanceof InMemoryStore;
}

/** The candidate every process adopts: earliest `createdAt`, then smallest row key. */
function earliest(items: Item[]): Item | undefined {
  return items
    .filter((item) => keyOf(item) !== undefined)
    .sort((a, b) => time(a.createdAt) - time(b.createdAt) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))[0];
}

function keyOf(item: Item | null | undefined): string | undefined {
  const key = item?.value.key;
  return typeof key === "string" && key.length > 0 ? key : undefined;
}

function time(date: Date | string | number): number {
  return new Date(date).getTime();
}
