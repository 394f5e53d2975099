/**
 * One review run over a scope: the stages of this folder in a row, gather → detect → select →
 * evidence → propose → vet → revision → store (with the revisions the run has seen) → apply under
 * `autoApply`. `LessonManager.review()` and the graph's learn node are adapters over it: neither
 * writes a stage of its own.
 *
 * The scope is a partition (all its tools), some of its tools, or one thread's records since a
 * request id; cards, settings, revisions and review marks are the partition's either way.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { Ledger } from "../../ledger/ledger.js";
import type { Refusal, Revision } from "../../ledger/schema.js";
import type { ToolIndex } from "../../routing/tool-index.js";
import { type UsageFlag, usageFlags } from "../../routing/usage-flags.js";
import { definedOnly } from "../../internal.js";
import type { SettingsInput } from "../../settings.js";
import { detect } from "../detect.js";
import type { Proposer } from "../proposer.js";
import { DEFAULT_VET_OPTIONS, type VetOptions } from "../vet.js";
import { DEFAULT_EXAMPLE_OBJECTIVE, type ExampleObjective } from "../what-if.js";
import { applyRevision } from "./apply.js";
import { buildEvidence, reviewRouting, routingRanks } from "./evidence.js";
import { gatherWindow } from "./gather.js";
import { guardExamples, type GuardOptions, type GuardVerdict, guardWordings, type Replayed } from "./guard.js";
import { proposeLessons } from "./propose.js";
import { buildRevision } from "./revision.js";
import { type SkipReason, selectDue } from "./select.js";
import { storeReview } from "./store.js";
import { keptNothing, valueCheck, type VettedLessons, vetLessons } from "./vet-lessons.js";

/** Who applies a revision under `autoApply`. */
export const AUTO_APPROVER = "tool-lessons:auto";

/** What a review run needs: the ledger it reads and writes, the index it asks, who proposes and how the vet reads. */
export interface ReviewDeps {
  ledger: Ledger;
  /** The routing index ("what if" during the review; kept in step on apply). */
  index: ToolIndex;
  proposer: Proposer;
  /** @default DEFAULT_EXAMPLE_OBJECTIVE */
  objective?: ExampleObjective;
  /** @default DEFAULT_VET_OPTIONS */
  vet?: VetOptions;
  /**
   * The guard on the whole (`guard.ts`): new wordings reach routing only when a held-out slice
   * of the partition's served traffic does not route worse with them; `false` lets every wording
   * in unguarded, as before the guard.
   * @default DEFAULT_GUARD
   */
  guard?: GuardOptions | false;
}

/** What one review run looks at. */
export interface ReviewScope {
  /** The partition reviewed. */
  partition: string;
  /**
   * Only these tools (others are left out, not skipped).
   * @default every registered tool
   */
  tools?: readonly string[];
  /**
   * Only the call, turn and route records of this thread.
   * @default every thread
   */
  threadId?: string;
  /**
   * Only records whose id sorts after this one (ids are time-ordered: e.g. a request id).
   * @default every record in the window
   */
  after?: string;
}

/** Options of {@link runReview}. */
export interface RunReviewOptions {
  /** Propose and return revisions without storing anything. @default false */
  dryRun?: boolean;
  /** Apply every stored revision at once, approved by {@link AUTO_APPROVER}. @default false */
  autoApply?: boolean;
  /** Settings for this review only, over the partition's stored ones. @default {} */
  config?: SettingsInput;
  /**
   * Told when applying a stored revision fails under `autoApply` (it then stays proposed, for an
   * operator); the run goes on with the next one.
   * @default none: the error is thrown
   */
  onApplyError?: (revision: Revision, error: unknown) => void;
}

/** The defaults of {@link RunReviewOptions} (`onApplyError` has none: errors are thrown). */
export const DEFAULT_RUN_REVIEW_OPTIONS: Readonly<Required<Omit<RunReviewOptions, "onApplyError">>> = Object.freeze({
  dryRun: false,
  autoApply: false,
  config: {},
});

/** What a review returns. */
export interface Review {
  partition: string;
  /**
   * Revisions proposed (applied too, under `autoApply`), one per tool with something kept: only
   * those stored (a revision another review claimed the tool before is left out), or, under
   * `dryRun`, every one built.
   */
  revisions: Revision[];
  /** Everything refused, per tool. */
  refused: { tool: string; refusal: Refusal }[];
  /** Tools not reviewed this time, and why. */
  skipped: { tool: string; reason: SkipReason }[];
  /** Usage flags, for a person to read. */
  flags: UsageFlag[];
  /**
   * What the guard on the whole let into routing and held back, and why (absent when it did not
   * run: a dry run, a review of one thread or of records after an id, or the guard off).
   */
  guard?: GuardVerdict;
}

/**
 * Review `scope`: read its window, find what repeats, propose lessons per due tool, vet them,
 * build each tool's kept lessons into a proposed revision, store them (each with a claim on its
 * tool against the revisions this run saw, so two runs at once propose a tool once, and a later
 * revision of a tool is stored as such), then apply them under `autoApply`.
 * `config` is passed to the proposer's model calls.
 */
export async function runReview(
  deps: ReviewDeps,
  scope: ReviewScope,
  options: RunReviewOptions = {},
  config?: RunnableConfig,
): Promise<Review> {
  const o = { ...DEFAULT_RUN_REVIEW_OPTIONS, ...definedOnly(options) };
  const { ledger, index, proposer } = deps;
  const partition = scope.partition;
  const window = await gatherWindow(ledger, partition, {
    config: o.config,
    ...(scope.threadId !== undefined ? { threadId: scope.threadId } : {}),
    ...(scope.after !== undefined ? { after: scope.after } : {}),
  });
  const { settings, cards } = window;
  const names = cards.map((c) => c.name);
  const detection = detect({
    turns: window.turns,
    routes: window.routes,
    calls: window.calls,
    tools: names,
    cards,
    settings,
  });
  const selection = selectDue({
    ...window,
    detection,
    callsModel: proposer.callsModel !== false,
    ...(scope.tools !== undefined ? { tools: scope.tools } : {}),
  });
  const review: Review = { partition, revisions: [], refused: [], skipped: selection.skipped, flags: [] };

  // The wordings of what the tools served first: examples are learned only where they fall short.
  // A review of the whole window brings them forward through the guard; any other keeps the gate.
  const whole = scope.threadId === undefined && scope.after === undefined;
  const guarded = whole && !o.dryRun && deps.guard !== false;
  let replayed: Replayed[] = [];
  if (guarded) {
    ({ verdict: review.guard, replayed } = await guardWordings({
      ledger,
      index,
      partition,
      turns: window.turns,
      calls: window.calls,
      cards,
      k: settings.routingK,
      options: deps.guard || {},
    }));
  } else {
    await index.refreshWordings(partition, whole ? window : undefined);
  }
  const routing = reviewRouting(window, index, deps.objective ?? DEFAULT_EXAMPLE_OBJECTIVE);
  const containsValue = valueCheck(window);
  const marks = new Map<string, string>();
  const built: { evidence: Awaited<ReturnType<typeof buildEvidence>>; vetted: VettedLessons }[] = [];
  for (const due of selection.due) {
    const evidence = await buildEvidence(routing, window, due);
    const { proposal, reviewedThrough } = await proposeLessons(proposer, evidence.evidence, due.detection, config);
    if (reviewedThrough !== undefined) marks.set(due.card.name, reviewedThrough);
    const vetted = vetLessons({
      window,
      evidence,
      proposal,
      containsValue,
      options: deps.vet ?? DEFAULT_VET_OPTIONS,
    });
    if (!keptNothing(vetted)) built.push({ evidence, vetted });
    else for (const refusal of vetted.refused) review.refused.push({ tool: due.card.name, refusal });
  }
  // The guard on the whole for the examples, all tools' together, on the slice the wordings met.
  if (guarded && review.guard) {
    const held = await guardExamples({
      ledger,
      index,
      partition,
      cards,
      k: settings.routingK,
      options: deps.guard || {},
      replayed,
      revisions: built.map((b) => ({
        tool: b.evidence.card.name,
        queriesAdded: b.vetted.kept.examples.map((e) => e.text),
      })),
    });
    if (held.length > 0) {
      review.guard.examples = held;
      // The gate row keeps the whole verdict for the operator.
      const gate = await ledger.wordingsGate(partition);
      if (gate) await ledger.setWordingsGate(partition, { ...gate, verdict: review.guard });
    }
    for (const { tool, reason } of held) {
      const b = built.find((x) => x.evidence.card.name === tool)!;
      for (const e of b.vetted.kept.examples)
        b.vetted.refused.push({ kind: "example", text: e.text, reason: "lowers_held_out", detail: reason });
      b.vetted.kept = { ...b.vetted.kept, examples: [] };
      b.vetted.displaced = [];
    }
  }
  for (const { evidence, vetted } of built) {
    const tool = evidence.card.name;
    for (const refusal of vetted.refused) review.refused.push({ tool, refusal });
    if (keptNothing(vetted)) continue;
    const ranks = await routingRanks(
      routing,
      evidence,
      vetted.kept.examples.map((e) => e.text),
      vetted.displaced,
    );
    review.revisions.push(
      buildRevision({
        partition,
        evidence,
        vetted,
        ranks,
        turns: window.turns,
        calls: window.calls,
        proposer: proposer.name,
        now: Date.now(),
      }),
    );
  }

  if (!o.dryRun) {
    review.revisions = await storeReview(ledger, partition, review.revisions, marks, window.revisions);
    if (o.autoApply) review.revisions = await applyAll(deps, review.revisions, partition, window.turns, o);
  }
  review.flags = usageFlags({ routes: window.routes, calls: window.calls, tools: names, settings });
  return review;
}

/** Apply each stored revision in turn; one that fails stays proposed when `onApplyError` is given. */
async function applyAll(
  deps: ReviewDeps,
  revisions: readonly Revision[],
  partition: string,
  turns: Parameters<typeof applyRevision>[3]["turns"],
  o: Pick<RunReviewOptions, "config" | "onApplyError">,
): Promise<Revision[]> {
  const out: Revision[] = [];
  for (const revision of revisions) {
    try {
      out.push(
        await applyRevision(deps.ledger, deps.index, revision.id, {
          partition,
          approvedBy: AUTO_APPROVER,
          config: o.config,
          turns,
        }),
      );
    } catch (error) {
      if (!o.onApplyError) throw error;
      o.onApplyError(revision, error);
      out.push(revision);
    }
  }
  return out;
}
