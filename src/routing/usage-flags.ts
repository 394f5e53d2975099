/**
 * Usage flags: tools routing keeps offering that nobody calls, and tools routing never offers.
 * For a person to read; nothing is changed from them. Pure: the caller reads the records.
 *
 * Only routed turns count: a route record with `allSent: true` (every tool was sent, no routing
 * choice was made) counts for nothing. A turn is a request id; several route records of one request
 * count once.
 */
import type { CallRecord, RouteRecord, TurnRecord } from "../ledger/schema.js";
import { DEFAULT_SETTINGS, type Settings } from "../settings.js";

export type UsageFlagKind = "retrieved_never_called" | "never_retrieved";

/** One flagged tool and the figures it rests on. */
export interface UsageFlag {
  tool: string;
  flag: UsageFlagKind;
  /** Routed turns in which routing offered the tool. */
  offeredTurns: number;
  /** Calls of the tool (successful or not). */
  calls: number;
  /** Routed turns observed for this tool (since it was registered, when that is given). */
  routedTurns: number;
}

/** Input of {@link usageFlags}. */
export interface UsageFlagsInput {
  /** Route records (what routing offered per request). */
  routes: readonly RouteRecord[];
  /** Call records. A tool counts as called when these or `turns` show a call. */
  calls?: readonly Pick<CallRecord, "tool">[];
  /** Turn records, as another source of calls (e.g. when call records were pruned). */
  turns?: readonly Pick<TurnRecord, "calls">[];
  /** The registered tools to judge; tools not listed are never flagged. */
  tools: readonly string[];
  /**
   * When each tool was registered (e.g. its card's `createdAt`): routes before that do not count
   * for it, so a tool added yesterday is not flagged over last month's turns.
   * @default every route counts for every tool
   */
  registeredAt?: Readonly<Record<string, number>>;
  /**
   * Thresholds.
   * @default DEFAULT_SETTINGS (minOffers 5, minTurns 20)
   */
  settings?: Pick<Settings, "minOffers" | "minTurns">;
}

/**
 * Flag each listed tool that is:
 * - `retrieved_never_called`: offered in at least `minOffers` routed turns and never called;
 * - `never_retrieved`: never offered and never called, over at least `minTurns` routed turns.
 *
 * When both `calls` and `turns` are given, `calls` in the result is the larger of the two counts
 * (each source is pruned on its own schedule). Sorted by tool name.
 */
export function usageFlags(input: UsageFlagsInput): UsageFlag[] {
  const settings = input.settings ?? DEFAULT_SETTINGS;
  const routed = new Map<string, { at: number; offered: Set<string> }>();
  for (const route of input.routes) {
    if (route.allSent) continue;
    const turn = routed.get(route.requestId) ?? { at: route.at, offered: new Set<string>() };
    turn.at = Math.min(turn.at, route.at);
    for (const offer of route.offered) turn.offered.add(offer.tool);
    routed.set(route.requestId, turn);
  }

  const fromCalls = countBy((input.calls ?? []).map((c) => c.tool));
  const fromTurns = countBy((input.turns ?? []).flatMap((t) => t.calls.map((c) => c.tool)));

  // One pass: when each routed turn happened, and when each tool was offered. Then per tool a
  // binary search over the sorted times, instead of a scan of every turn per tool.
  const turnTimes: number[] = [];
  const offeredAt = new Map<string, number[]>();
  for (const turn of routed.values()) {
    turnTimes.push(turn.at);
    for (const tool of turn.offered) {
      const times = offeredAt.get(tool);
      if (times) times.push(turn.at);
      else offeredAt.set(tool, [turn.at]);
    }
  }
  turnTimes.sort((a, b) => a - b);

  const flags: UsageFlag[] = [];
  for (const tool of [...new Set(input.tools)].sort()) {
    const calls = Math.max(fromCalls.get(tool) ?? 0, fromTurns.get(tool) ?? 0);
    if (calls > 0) continue;
    const since = input.registeredAt?.[tool] ?? Number.NEGATIVE_INFINITY;
    const routedTurns = turnTimes.length - firstAtOrAfter(turnTimes, since);
    const offeredTurns = (offeredAt.get(tool) ?? []).filter((at) => at >= since).length;
    if (offeredTurns >= settings.minOffers) {
      flags.push({ tool, flag: "retrieved_never_called", offeredTurns, calls, routedTurns });
    } else if (offeredTurns === 0 && routedTurns >= settings.minTurns) {
      flags.push({ tool, flag: "never_retrieved", offeredTurns, calls, routedTurns });
    }
  }
  return flags;
}

/** Index of the first value >= `at` in ascending `sorted` (its length when none). */
function firstAtOrAfter(sorted: readonly number[], at: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function countBy(keys: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}
