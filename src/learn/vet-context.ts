/**
 * What the vet is told about one tool's review ({@link VetContext}), its options, and how the
 * review builds the parts of the context that come from detection and from closed revisions.
 */
import type { CallRecord, Learned, Revision } from "../ledger/schema.js";
import { MIN_EFFECT_CALLERS } from "./effect.js";
import type { ToolDetection } from "./detect.js";
import type { AimedPattern } from "../text/injection.js";
import type { EvidenceLimits } from "./limits.js";
import type { TurnedDown } from "./types.js";
import type { ContainsValue } from "./vet-rules.js";

/** The thresholds and caps the vet applies (the operator's stored settings). */
export type VetSettings = EvidenceLimits;

/** What the vet knows about one tool's review. */
export interface VetContext {
  /** The tool under review. */
  tool: string;
  /**
   * Texts of the tool's card whose words a lesson may use: the author's description, argument
   * names, enum values (see `cardWords`).
   * @default [tool]
   */
  card?: readonly string[];
  /** Every registered tool name. */
  registeredTools: ReadonlySet<string> | readonly string[];
  /**
   * Thresholds and caps.
   * @default DEFAULT_SETTINGS
   */
  settings?: Partial<VetSettings>;
  /** What the card has learned already: counts for the caps, texts for repeats and displacement. */
  learned: Pick<Learned, "examples" | "notes" | "notFor">;
  /** Ids of this tool's failed call records (what a note may cite). */
  failedCallIds: ReadonlySet<string>;
  /**
   * The masked error message of each failed call, and its thread: a word at least two threads'
   * errors share is template, and a note may use it.
   * @default none
   */
  failedCalls?: ReadonlyMap<string, { message: string; group: string }>;
  /** This tool's missed requests, id → masked request text (what an example may cite). */
  missedRequests: ReadonlyMap<string, string>;
  /**
   * Requests that went to this tool and another tool served, id → that tool and the masked
   * request text (what a "Not for" line may cite).
   */
  confusedRequests: ReadonlyMap<string, { servedBy: string; request: string }>;
  /** True when a text holds an argument value (keyed fingerprints of recorded values). */
  containsValue: ContainsValue;
  /**
   * What an operator turned down for this tool (the items of its dismissed and undone
   * revisions): never proposed again.
   * @default nothing
   */
  turnedDown?: TurnedDown;
  /**
   * Learned examples on the card the review's choice of the set no longer needs, least needed
   * first: at the cap, once no synthetic example is left to give way, a kept example takes the
   * slot of the next of them (recorded as displaced; undo puts it back).
   * @default none
   */
  yielding?: readonly string[];
}

/**
 * What an operator turned down in these revisions: every item of a dismissed one, and what an
 * undone one had put on the card (not the examples apply had already withdrawn).
 */
export function turnedDownOf(
  revisions: readonly Revision[],
  records: readonly Pick<CallRecord, "caller" | "at">[] = [],
): TurnedDown {
  const closed = revisions.filter(
    (r) => r.status === "dismissed" || (r.status === "undone" && !freshFromOthers(r, records)),
  );
  return {
    notes: closed.flatMap((r) => r.notesAdded),
    examples: closed.flatMap((r) => r.queriesAdded.filter((q) => !r.queriesWithdrawn.includes(q))),
    notFor: closed.flatMap((r) => r.avoidAdded.map((n) => n.text)),
    exampleCalls: closed.flatMap((r) => (r.callExample === null ? [] : [r.callExample])),
  };
}

/**
 * Whether a revision the effect check undid (`undoneBecause`) may be proposed again: the tool's
 * call records since the undo come from at least {@link MIN_EFFECT_CALLERS} distinct known callers,
 * so what drove the undo (perhaps one caller's crafted calls) is not all the evidence there is. An
 * operator's undo (no `undoneBecause`) stays turned down.
 */
export function freshFromOthers(
  revision: Pick<Revision, "undoneBecause" | "updatedAt">,
  records: readonly Pick<CallRecord, "caller" | "at">[],
): boolean {
  if (revision.undoneBecause === undefined) return false;
  const callers = new Set<string>();
  for (const r of records) if (r.at > revision.updatedAt && r.caller !== undefined) callers.add(r.caller);
  return callers.size >= MIN_EFFECT_CALLERS;
}

/** Options of the vet (set through `LessonManagerOptions.vet`). */
export interface VetOptions {
  /**
   * Patterns of text aimed at the model, checked in addition to the shared list of
   * `text/injection.ts` (on the same normalized views of the text).
   * @default []
   */
  aimedPatterns?: readonly AimedPattern[];
}

/** The defaults of {@link VetOptions}. */
export const DEFAULT_VET_OPTIONS: Readonly<Required<VetOptions>> = Object.freeze({
  aimedPatterns: [],
});

/** A pattern of text aimed at the model, and the label a refusal reports for it (see `text/injection.ts`). */
export type { AimedPattern } from "../text/injection.js";

/** The evidence maps of {@link VetContext} for one tool, from its detection. */
export function evidenceMaps(
  td: ToolDetection,
): Pick<VetContext, "failedCallIds" | "failedCalls" | "missedRequests" | "confusedRequests"> {
  const failedCallIds = new Set<string>();
  const failedCalls = new Map<string, { message: string; group: string }>();
  for (const f of td.failures) {
    f.callIds.forEach((id, i) => {
      failedCallIds.add(id);
      failedCalls.set(id, { message: f.errorMessage, group: f.callGroups?.[i] ?? id });
    });
  }
  const missedRequests = new Map<string, string>();
  for (const m of td.misses) missedRequests.set(m.requestId, m.request);
  const confusedRequests = new Map<string, { servedBy: string; request: string }>();
  for (const c of td.confusions) confusedRequests.set(c.requestId, { servedBy: c.servedBy, request: c.request });
  return { failedCallIds, failedCalls, missedRequests, confusedRequests };
}
