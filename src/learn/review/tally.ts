/**
 * Tally: a partition's evidence counted as its records are written, so that a graph knows, with
 * no read of the ledger, when a tool's refused calls, misses or confusions since its last review
 * reach the evidence rules (`minFailures`, `minMisses`, `minConfusions`), whatever threads they
 * came from. Fed with each turn record (and the route record of its request) as it is appended
 * (`ledger/appended.ts`); each new turn goes through {@link detect} with the turn before it in its
 * thread, so the rules are detection's own, not a copy. What a review then does is the review's
 * business: the tally only says when to run one.
 *
 * It also counts, for the tools told to it as revised (an applied revision whose effect is not yet
 * judged, {@link EvidenceTally.watch}), what an effect check could measure since it last ran: the
 * tool's calls, misses and confusions. {@link EvidenceTally.effectDue} names those with enough
 * for a check, so a graph measures a revision only when new evidence for it has arrived.
 *
 * Memory is bounded: the last turn of at most `maxThreads` threads, the route of at most
 * `maxPending` requests not yet finished, the counts of at most `maxPartitions` partitions (the
 * least recently fed forgotten first).
 */
import type { RouteRecord, TurnRecord } from "../../ledger/schema.js";
import { DEFAULT_SETTINGS, type Settings } from "../../settings.js";
import { detect, REFUSED_ERROR_CLASSES } from "../detect.js";

/** Options of {@link EvidenceTally}. */
export interface EvidenceTallyOptions {
  /** The tools counted (records about others are ignored). */
  tools: readonly string[];
  /**
   * Threads whose last turn is remembered (for misses and confusions across a thread's turns).
   * @default 10_000
   */
  maxThreads?: number;
}

/** Route records kept until their request's turn is written. */
const MAX_PENDING = 10_000;
/** Partitions counted at once (least recently fed dropped first). */
const MAX_PARTITIONS = 1_000;

/** The defaults of {@link EvidenceTallyOptions} (`tools` is required). */
export const DEFAULT_EVIDENCE_TALLY: Readonly<Required<Omit<EvidenceTallyOptions, "tools">>> = Object.freeze({
  maxThreads: 10_000,
});

/** What a tool has gathered since its last review. */
export interface ToolTally {
  /** Calls whose error says the arguments were refused (`REFUSED_ERROR_CLASSES`). */
  refused: number;
  misses: number;
  confusions: number;
}

/** Which evidence rule a due tool met. */
export type DueKind = "failure" | "miss" | "confusion";

/** A tool whose evidence since its last review reached a rule, and which rules. */
export interface DueTally {
  tool: string;
  kinds: DueKind[];
}

type Rules = Pick<Settings, "minFailures" | "minMisses" | "minConfusions">;

/** A partition's evidence since each tool's last review, counted as it is written. */
export class EvidenceTally {
  private readonly tools: readonly string[];
  private readonly known: ReadonlySet<string>;
  private readonly o: Readonly<Required<Omit<EvidenceTallyOptions, "tools">>>;
  /** Partition → tool → counts (insertion order: least recently fed first). */
  private readonly counts = new Map<string, Map<string, ToolTally>>();
  /** Partition → the evidence rules its stored settings set (defaults until told). */
  private readonly rules = new Map<string, Rules>();
  /** Partition + thread → the thread's last turn (request text masked, as stored). */
  private readonly lastTurn = new Map<string, TurnRecord>();
  /** Partition + request → its route record, until its turn is written. */
  private readonly pending = new Map<string, RouteRecord>();
  /** Partition → revised tool → its calls, misses and confusions since its effect was last checked. */
  private readonly sinceCheck = new Map<string, Map<string, number>>();

  constructor(options: EvidenceTallyOptions) {
    this.tools = [...new Set(options.tools)];
    this.known = new Set(this.tools);
    this.o = {
      maxThreads: options.maxThreads ?? DEFAULT_EVIDENCE_TALLY.maxThreads,
    };
  }

  /** A route record written: kept until its request's turn arrives. */
  route(route: RouteRecord): void {
    remember(this.pending, `${route.partition}\u0000${route.requestId}`, route, MAX_PENDING);
  }

  /** A turn record written: its refused calls, and what it and its thread's turn before show. */
  turn(turn: TurnRecord): void {
    const key = `${turn.partition}\u0000${turn.requestId}`;
    const route = this.pending.get(key);
    this.pending.delete(key);
    const threadKey = turn.threadId === undefined ? undefined : `${turn.partition}\u0000${turn.threadId}`;
    const before = threadKey === undefined ? undefined : this.lastTurn.get(threadKey);
    if (threadKey !== undefined) remember(this.lastTurn, threadKey, turn, this.o.maxThreads);

    const refused = new Map<string, number>();
    for (const call of turn.calls) {
      if (call.outcome !== "error" || !this.known.has(call.tool)) continue;
      if (!REFUSED_ERROR_CLASSES.has(call.errorClass ?? "unknown")) continue;
      refused.set(call.tool, (refused.get(call.tool) ?? 0) + 1);
    }
    const prior = before && before.id < turn.id ? before : undefined;
    if (refused.size === 0 && !mayAddEvidence(turn, prior, route, this.known)) {
      // Nothing to detect, but a watched tool's calls still count towards its effect check.
      this.countForEffects(turn, new Map());
      return;
    }
    // Detection's own rules over this turn and the one before it in the thread: what this turn adds.
    const found = detect({
      turns: prior ? [prior, turn] : [turn],
      routes: route ? [route] : [],
      calls: [],
      tools: this.tools,
    });
    this.countForEffects(turn, found.tools);
    const added = new Map<string, ToolTally>();
    for (const [tool, td] of found.tools) {
      const n = refused.get(tool) ?? 0;
      if (n + td.misses.length + td.confusions.length === 0) continue;
      added.set(tool, { refused: n, misses: td.misses.length, confusions: td.confusions.length });
    }
    if (added.size === 0) return;
    const partition = this.partitionCounts(turn.partition);
    for (const [tool, t] of added) {
      const c = partition.get(tool) ?? { refused: 0, misses: 0, confusions: 0 };
      partition.set(tool, {
        refused: c.refused + t.refused,
        misses: c.misses + t.misses,
        confusions: c.confusions + t.confusions,
      });
    }
  }

  /** The evidence rules of a partition, from its stored settings (the defaults until told). */
  setRules(partition: string, rules: Rules): void {
    this.rules.set(partition, {
      minFailures: rules.minFailures,
      minMisses: rules.minMisses,
      minConfusions: rules.minConfusions,
    });
  }

  /** The tools of a partition whose evidence since their last review meets a rule, in tool order. O(tools counted). */
  due(partition: string): DueTally[] {
    const counts = this.counts.get(partition);
    if (!counts || counts.size === 0) return [];
    const r = this.rules.get(partition) ?? DEFAULT_SETTINGS;
    const out: DueTally[] = [];
    for (const tool of this.tools) {
      const c = counts.get(tool);
      if (!c) continue;
      const kinds: DueKind[] = [];
      if (c.refused >= r.minFailures) kinds.push("failure");
      if (c.misses >= r.minMisses) kinds.push("miss");
      if (c.confusions >= r.minConfusions) kinds.push("confusion");
      if (kinds.length > 0) out.push({ tool, kinds });
    }
    return out;
  }

  /** A tool's counts since its last review. */
  of(partition: string, tool: string): ToolTally {
    return this.counts.get(partition)?.get(tool) ?? { refused: 0, misses: 0, confusions: 0 };
  }

  /** The tools are being reviewed: their counts start again from nothing. */
  reviewed(partition: string, tools: readonly string[]): void {
    const counts = this.counts.get(partition);
    if (!counts) return;
    for (const tool of tools) counts.delete(tool);
  }

  /**
   * These tools of a partition have an applied revision whose effect is not judged yet: count
   * their evidence from now on (a tool already watched keeps its count).
   */
  watch(partition: string, tools: readonly string[]): void {
    const watched = this.sinceCheck.get(partition) ?? new Map<string, number>();
    for (const tool of tools) if (this.known.has(tool) && !watched.has(tool)) watched.set(tool, 0);
    if (watched.size > 0) remember(this.sinceCheck, partition, watched, MAX_PARTITIONS);
  }

  /** These tools' effects are judged (or nothing of theirs is applied): stop counting for them. */
  unwatch(partition: string, tools: readonly string[]): void {
    const watched = this.sinceCheck.get(partition);
    if (!watched) return;
    for (const tool of tools) watched.delete(tool);
    if (watched.size === 0) this.sinceCheck.delete(partition);
  }

  /**
   * The watched tools of a partition with at least `min` calls, misses and confusions since their
   * effect was last checked, in tool order; their counts start again from nothing. O(tools watched).
   */
  effectDue(partition: string, min: number): string[] {
    const watched = this.sinceCheck.get(partition);
    if (!watched || watched.size === 0) return [];
    const due = this.tools.filter((tool) => (watched.get(tool) ?? 0) >= min);
    for (const tool of due) watched.set(tool, 0);
    return due;
  }

  /** A watched tool's count since its effect was last checked (`undefined`: not watched). */
  sinceEffectCheck(partition: string, tool: string): number | undefined {
    return this.sinceCheck.get(partition)?.get(tool);
  }

  private countForEffects(
    turn: TurnRecord,
    found: ReadonlyMap<string, { misses: unknown[]; confusions: unknown[] }>,
  ): void {
    const watched = this.sinceCheck.get(turn.partition);
    if (!watched || watched.size === 0) return;
    for (const [tool, n] of watched) {
      const td = found.get(tool);
      const calls = turn.calls.filter((c) => c.tool === tool).length;
      watched.set(tool, n + calls + (td ? td.misses.length + td.confusions.length : 0));
    }
  }

  private partitionCounts(partition: string): Map<string, ToolTally> {
    let counts = this.counts.get(partition);
    if (counts) this.counts.delete(partition);
    else counts = new Map();
    remember(this.counts, partition, counts, MAX_PARTITIONS);
    return counts;
  }
}

/** Set `key` as the newest entry of `map`, forgetting the oldest beyond `max`. */
function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) map.delete(map.keys().next().value as string);
}

/**
 * Whether detection over a turn (with the thread's turn before it and its request's route) can
 * find a miss or a confusion: the conditions of `detect`'s rules, checked without running it.
 * False means `detect` finds none, so a quiet turn (served by a tool routing offered, in a new
 * thread) costs the tally no detection. Pure.
 */
export function mayAddEvidence(
  turn: TurnRecord,
  before: TurnRecord | undefined,
  route: RouteRecord | undefined,
  known: ReadonlySet<string>,
): boolean {
  const served = turn.servedBy;
  if (served === undefined) return false;
  // served_unoffered / ranked_first: routing made a choice and did not offer the tool that served.
  if (route && !route.allSent && !route.offered.some((o) => o.tool === served)) return true;
  if (!before || turn.threadId === undefined) return false;
  // re_asked: the turn before never called the tool that served this one, or was served by another.
  if (known.has(served) && !before.calls.some((c) => c.tool === served)) return true;
  return before.servedBy !== undefined && before.servedBy !== served && known.has(before.servedBy);
}
