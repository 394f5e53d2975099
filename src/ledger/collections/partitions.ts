import { decodeLabel, META_LABEL } from "../keys.js";
import { type LedgerContext, listAllNamespaces } from "./store-io.js";

/**
 * Every partition with any row, sorted: operator scope, the ledger's only read across
 * partitions. The ledger-wide `~meta` rows are not a partition.
 */
export async function listPartitions(ctx: LedgerContext): Promise<string[]> {
  const namespaces = await listAllNamespaces(ctx, [ctx.root]);
  const partitions = new Set<string>();
  for (const ns of namespaces) {
    if (ns[0] === ctx.root && ns.length > 1 && ns[1] !== META_LABEL) partitions.add(decodeLabel(ns[1]));
  }
  return [...partitions].sort();
}
