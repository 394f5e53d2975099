/**
 * The caller of a run, resolved the one way every piece resolves it, and remembered for its
 * thread in the ledger's {@link ThreadCallers} (`ledger/thread-callers.ts`), where the recorder
 * looks it up.
 */
import type { ThreadCallers } from "../ledger/thread-callers.js";
import { callerIdOf, partitionOf, type PartitionSpec } from "./partition.js";

export { DEFAULT_THREAD_CALLERS, ThreadCallers, type ThreadCallersOptions } from "../ledger/thread-callers.js";

/**
 * The caller of a run, resolved the one way every piece resolves it ({@link partitionOf}), and
 * remembered for its thread in `callers` (or the thread marked refused, so the recorder writes
 * none of its records). Serving a turn and the learning nodes both call this.
 * @throws what `partitionOf` throws for ids that are not ones
 */
export function resolveThreadCaller(
  config: Parameters<typeof partitionOf>[0],
  resolver: PartitionSpec | undefined,
  threadId: string | undefined,
  callers: ThreadCallers | undefined,
): string {
  let partition: string;
  try {
    partition = partitionOf(config, resolver);
  } catch (error) {
    callers?.refuse(threadId);
    throw error;
  }
  callers?.remember(threadId, partition, callerIdOf(config, resolver));
  return partition;
}
