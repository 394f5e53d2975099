/**
 * Gather: what one review reads from the ledger. The only stage of a review that reads the
 * ledger; every later stage works on the plain {@link ReviewWindow} it returns.
 *
 * The whole partition for an operator's review, or, for a graph node before the agent, only one
 * thread's records after the last id it saw (`threadId`, `after`): cards, settings, revisions,
 * review marks and the fingerprint key are the partition's either way.
 */
import type { Ledger } from "../../ledger/ledger.js";
import type { CallRecord, Revision, RouteRecord, ToolCard, TurnRecord } from "../../ledger/schema.js";
import { definedOnly } from "../../internal.js";
import { parseSettings, type Settings, type SettingsInput } from "../../settings.js";

/** What one review reads: the partition's settings, cards and revisions, and the records in its window. */
export interface ReviewWindow {
  partition: string;
  /** The stored settings with this review's override. */
  settings: Settings;
  /** Every registered tool of the partition. */
  cards: ToolCard[];
  /** Call records in the window, oldest first. */
  calls: CallRecord[];
  /** Turn records in the window, oldest first. */
  turns: TurnRecord[];
  /** Route records in the window, oldest first. */
  routes: RouteRecord[];
  /** Every revision of the partition, newest first. */
  revisions: Revision[];
  /** Per tool, the newest call record id its last review read. */
  marks: Map<string, string>;
  /** The key of the value fingerprints (for the vet's no-value check). */
  fingerprintKey: string;
}

/** Options of {@link gatherWindow}. */
export interface GatherOptions {
  /**
   * Settings for this review only, over the partition's stored ones.
   * @default {} (the stored settings)
   */
  config?: SettingsInput;
  /**
   * Only call, turn and route records whose id sorts after this one (ids are time-ordered).
   * @default every record
   */
  after?: string;
  /**
   * Only call, turn and route records of this thread.
   * @default every thread (and records with none)
   */
  threadId?: string;
}

/** The defaults of {@link GatherOptions} (`after` and `threadId` have none: no filter). */
export const DEFAULT_GATHER_OPTIONS: Readonly<Required<Omit<GatherOptions, "after" | "threadId">>> = Object.freeze({
  config: {},
});

/**
 * Read what one review needs of a partition.
 * @throws InvalidInput when `config` holds an unknown or bad setting.
 */
export async function gatherWindow(
  ledger: Ledger,
  partition: string,
  options: GatherOptions = {},
): Promise<ReviewWindow> {
  const o = { ...DEFAULT_GATHER_OPTIONS, ...definedOnly(options) };
  const settings = parseSettings(o.config, await ledger.getSettings(partition));
  const list = o.after === undefined ? {} : { after: o.after };
  const [cards, calls, turns, routes, revisions, marks, fingerprintKey] = await Promise.all([
    ledger.listCards(partition),
    ledger.listCalls(partition, list),
    ledger.listTurns(partition, list),
    ledger.listRoutes(partition, list),
    ledger.listRevisions(partition),
    ledger.reviewMarks(partition),
    ledger.fingerprintKey(),
  ]);
  const inThread = <T extends { threadId?: string }>(rows: T[]): T[] =>
    o.threadId === undefined ? rows : rows.filter((r) => r.threadId === o.threadId);
  return {
    partition,
    settings,
    cards,
    calls: inThread(calls),
    turns: inThread(turns),
    routes: inThread(routes),
    revisions,
    marks,
    fingerprintKey,
  };
}
