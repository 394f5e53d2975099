/**
 * The store a graph was compiled with, as the ledger must see it.
 */
import type { BaseStore } from "@langchain/langgraph";

/**
 * The store a graph was compiled with: LangGraph hands nodes `config.store` wrapped in its
 * `AsyncBatchedStore` (a new wrapper per run, whose `batch` is not for callers), so the wrapped
 * store is used.
 */
export function unwrapStore(store: BaseStore): BaseStore {
  const batched = store as BaseStore & { lg_name?: string; store?: BaseStore };
  return batched.lg_name === "AsyncBatchedStore" && batched.store ? batched.store : store;
}
