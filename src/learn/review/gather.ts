/**
 * Gather: what one review reads from the ledger. The only stage of a review that reads the
 * ledger; every later stage works on the plain {@link ReviewWindow} it returns.
 *
 * The partition's recent window for an operator's review (see {@link gatherWindow}), or, for a
 * graph node before the agent, only one thread's records after the last id it saw (`threadId`,
 * `after`): cards, settings, revisions, review marks and the fingerprint key are the partition's
 * either way.
 */
import type { Ledger } from "../../ledger/ledger.js";
import type { CallRecord, Revision, RouteRecord, ToolCard, TurnRecord } from "../../ledger/schema.js";
import { definedOnly, sortById } from "../../internal.js";
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
 * How far before its oldest turn a window still reads calls: a run's calls are recorded before
 * its turn record, and a request's values must reach the vet's value check.
 */
export const CALL_SLACK_MS = 10 * 60_000;

/**
 * Read what one review needs of a partition: its window, not its history.
 *
 * - Turns and routes: the newest `settings.reviewTurns` of each (after `after`), read newest
 *   first through the store's index, so the cost does not grow with what the ledger retains.
 * - Calls, per tool (registered or called): when the turn window holds every retained turn and
 *   route, every retained call (what a review read before windows existed); otherwise the calls
 *   made since the window's oldest turn (less {@link CALL_SLACK_MS}), at most `reviewTurns` per
 *   tool, and never fewer than the newest `maxCallsPerTool` (detection's own window).
 * @throws InvalidInput when `config` holds an unknown or bad setting.
 */
export async function gatherWindow(
  ledger: Ledger,
  partition: string,
  options: GatherOptions = {},
): Promise<ReviewWindow> {
  const o = { ...DEFAULT_GATHER_OPTIONS, ...definedOnly(options) };
  const settings = parseSettings(o.config, await ledger.getSettings(partition));
  const after = o.after === undefined ? {} : { after: o.after };
  const [cards, calledTools, revisions, marks, fingerprintKey] = await Promise.all([
    ledger.listCards(partition),
    ledger.listCalledTools(partition),
    ledger.listRevisions(partition),
    ledger.reviewMarks(partition),
    ledger.fingerprintKey(partition),
  ]);
  const tools = [...new Set([...cards.map((c) => c.name), ...calledTools])];
  const { calls, turns, routes } = await gatherRecords(ledger, partition, settings, { ...after, tools });
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

/** The records of a window (see {@link gatherWindow}), each kind oldest first. */
export interface WindowRecords {
  calls: CallRecord[];
  turns: TurnRecord[];
  routes: RouteRecord[];
}

/**
 * The records one window reads, within the bounds {@link gatherWindow} states: the newest
 * `settings.reviewTurns` turns and routes after `after`, and the calls of `tools` since the
 * window's oldest turn (at most `reviewTurns` per tool, never fewer than `maxCallsPerTool`). The
 * review reads its window with it, and the effect check (`review/effect.ts`) the records since a
 * revision was applied: neither reads past these bounds, whatever the ledger retains.
 */
export async function gatherRecords(
  ledger: Ledger,
  partition: string,
  settings: Settings,
  scope: { tools: readonly string[]; after?: string },
): Promise<WindowRecords> {
  const window = { ...(scope.after === undefined ? {} : { after: scope.after }), limit: settings.reviewTurns };
  const [turns, routes] = await Promise.all([
    ledger.listTurns(partition, window),
    ledger.listRoutes(partition, window),
  ]);
  const whole = turns.length < settings.reviewTurns && routes.length < settings.reviewTurns;
  const since = whole ? undefined : callsSince(turns, scope.after);
  const perTool = await Promise.all(
    scope.tools.map((tool) => windowCalls(ledger, partition, tool, settings, scope.after, since)),
  );
  return { calls: sortById(perTool.flat()), turns, routes };
}

/** The id bound of calls made since the oldest turn of a full window (time-ordered ids), or `after`. */
function callsSince(turns: readonly TurnRecord[], after: string | undefined): string | undefined {
  const oldest = turns[0];
  if (oldest === undefined) return after;
  const bound = Math.max(0, oldest.at - CALL_SLACK_MS)
    .toString(36)
    .padStart(9, "0");
  return after !== undefined && after > bound ? after : bound;
}

/** One tool's calls in the window (see {@link gatherWindow}), oldest first. */
async function windowCalls(
  ledger: Ledger,
  partition: string,
  tool: string,
  settings: Settings,
  after: string | undefined,
  since: string | undefined,
): Promise<CallRecord[]> {
  const base = after === undefined ? { tool } : { tool, after };
  if (since === undefined) return ledger.listCalls(partition, base);
  const recent = await ledger.listCalls(partition, { tool, after: since, limit: settings.reviewTurns });
  if (recent.length >= settings.maxCallsPerTool) return recent;
  return ledger.listCalls(partition, { ...base, limit: Math.max(settings.maxCallsPerTool, recent.length) });
}
