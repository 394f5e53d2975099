/**
 * Select: which tools one review looks at, and why the others are skipped. Pure.
 */
import type { Revision, ToolCard } from "../../ledger/schema.js";
import type { Settings } from "../../settings.js";
import type { Detection, ToolDetection } from "../detect.js";

/** Why a tool is not reviewed this time. */
export type SkipReason = "revision_waiting" | "no_new_calls" | "too_little_evidence" | "over_max_tools";

/** A tool to review: its card, what detection found, and whether it has calls its last review did not read. */
export interface DueTool {
  card: ToolCard;
  detection: ToolDetection;
  fresh: boolean;
}

/** What {@link selectDue} decided: the tools to review, in order, and the skipped ones. */
export interface Selection {
  due: DueTool[];
  skipped: { tool: string; reason: SkipReason }[];
}

/** Input of {@link selectDue}. */
export interface SelectInput {
  /** Every registered tool, in registration order. */
  cards: readonly ToolCard[];
  detection: Detection;
  /** The partition's revisions (a tool with one `proposed` is waiting). */
  revisions: readonly Revision[];
  /** Per tool, the newest call record id its last review read. */
  marks: ReadonlyMap<string, string>;
  settings: Pick<Settings, "minCalls" | "minMisses" | "minConfusions" | "maxTools">;
  /** Whether the proposer calls a model (a tool with no new calls then costs nothing: skipped). */
  callsModel: boolean;
  /** Only these tools (others are left out, not skipped). */
  tools?: readonly string[];
}

/**
 * The tools due for review, in card order, each skipped tool with its reason:
 * - `revision_waiting`: a revision of it is proposed, not yet applied or dismissed;
 * - `no_new_calls`: never called, or no call since its last review (only a proposer that calls
 *   no model looks at it again: routing may have moved since);
 * - `too_little_evidence`: fewer than `minCalls` calls read, `minMisses` misses and
 *   `minConfusions` confusions;
 * - `over_max_tools`: past the first `maxTools`, those with new calls first, then those with the
 *   most failed calls, then the most misses and confusions.
 */
export function selectDue(input: SelectInput): Selection {
  const wanted = input.tools ? new Set(input.tools) : undefined;
  const waiting = new Set(input.revisions.filter((r) => r.status === "proposed").map((r) => r.tool));
  const s = input.settings;
  const skipped: Selection["skipped"] = [];
  const due: DueTool[] = [];
  for (const card of input.cards) {
    if (wanted && !wanted.has(card.name)) continue;
    const td = input.detection.tools.get(card.name);
    if (!td) continue;
    if (waiting.has(card.name)) {
      skipped.push({ tool: card.name, reason: "revision_waiting" });
      continue;
    }
    const mark = input.marks.get(card.name);
    const fresh = td.lastCallId !== undefined && (mark === undefined || td.lastCallId > mark);
    if (td.lastCallId === undefined || (!fresh && input.callsModel)) {
      skipped.push({ tool: card.name, reason: "no_new_calls" });
      continue;
    }
    const enough = td.calls >= s.minCalls || td.misses.length >= s.minMisses || td.confusions.length >= s.minConfusions;
    if (!enough) {
      skipped.push({ tool: card.name, reason: "too_little_evidence" });
      continue;
    }
    due.push({ card, detection: td, fresh });
  }
  // Tools with new calls first: a second look never takes a place under maxTools from them.
  due.sort(
    (a, b) =>
      Number(b.fresh) - Number(a.fresh) ||
      failedCount(b.detection) - failedCount(a.detection) ||
      b.detection.misses.length +
        b.detection.confusions.length -
        (a.detection.misses.length + a.detection.confusions.length),
  );
  for (const { card } of due.slice(s.maxTools)) skipped.push({ tool: card.name, reason: "over_max_tools" });
  return { due: due.slice(0, s.maxTools), skipped };
}

function failedCount(td: ToolDetection): number {
  return td.failures.reduce((n, f) => n + f.callIds.length, 0);
}
