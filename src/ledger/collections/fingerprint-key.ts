import type { Item } from "@langchain/langgraph";
import { randomBytes } from "node:crypto";
import { StoreUnavailable } from "../../errors.js";
import { META_LABEL, timeOrderedId } from "../keys.js";
import { type LedgerContext, listNamespace } from "./store-io.js";

/**
 * How long a process that proposed the first fingerprint key waits for other processes'
 * proposals still being written before choosing among them. Longer than any store write.
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
 * The protocol: `BaseStore` has no compare-and-set, so each process that finds no key writes a
 * candidate under its own row, waits {@link KEY_SETTLE_MS} for candidates still in flight, and
 * every process adopts the same one (earliest `createdAt`, then smallest row key), which it then
 * stores as the ledger's key. Only the first use of a ledger pays the wait.
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
    await store.put(candidates, timeOrderedId(), { key: randomBytes(32).toString("hex") }, false);
    await new Promise((resolve) => setTimeout(resolve, KEY_SETTLE_MS));
    // A process that settled before this one wrote its candidate already stored the winner.
    const settled = keyOf(await store.get(ns, "fingerprint-key"));
    if (settled) return settled;
    const winner = (await listNamespace(this.ctx, candidates))
      .filter((item) => keyOf(item) !== undefined)
      .sort((a, b) => time(a.createdAt) - time(b.createdAt) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))[0];
    const key = keyOf(winner);
    if (!key) throw new StoreUnavailable("The ledger's fingerprint key could not be read back from the store.");
    await store.put(ns, "fingerprint-key", { key }, false);
    return key;
  }
}

function keyOf(item: Item | null | undefined): string | undefined {
  const key = item?.value.key;
  return typeof key === "string" && key.length > 0 ? key : undefined;
}

function time(date: Date | string | number): number {
  return new Date(date).getTime();
}
