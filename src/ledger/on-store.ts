/**
 * The one ledger over a graph's store: the nodes, the middleware and the ready agent's recorder
 * all write through it, so a store has one `Ledger` in the process.
 */
import type { BaseStore } from "@langchain/langgraph";
import { Ledger } from "./ledger.js";

/** Ledgers made over a graph's store, one per store, shared by every graph and recorder in the process. */
const ledgers = new WeakMap<BaseStore, Ledger>();

/**
 * The store a graph was compiled with: LangGraph hands nodes `config.store` wrapped in its
 * `AsyncBatchedStore` (a new wrapper per run, whose `batch` is not for callers), so the wrapped
 * store is used.
 */
export function unwrapStore(store: BaseStore): BaseStore {
  const batched = store as BaseStore & { lg_name?: string; store?: BaseStore };
  return batched.lg_name === "AsyncBatchedStore" && batched.store ? batched.store : store;
}

/** The one `Ledger` over a store (the recorder of `createToolLessonsAgent` writes through the same). */
export function ledgerOn(given: BaseStore): Ledger {
  const store = unwrapStore(given);
  let ledger = ledgers.get(store);
  if (!ledger) {
    ledger = new Ledger(store);
    ledgers.set(store, ledger);
  }
  return ledger;
}
