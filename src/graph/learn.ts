/**
 * learn: what classify signalled, acted on in one node. The user's edicts of the new turn are
 * vetted as rule text and stored at once as critical rules of the caller's partition (so this
 * very turn's block carries them). The tools whose partition evidence reached a rule are reviewed
 * by the one review run (`learn/review/run.ts`, the run `LessonManager.review()` makes: gather →
 * detect → select → evidence → propose → vet → revision → store → apply under `autoApply`) over
 * the partition's records, every thread's. On a memory signal, the tools' calls are evaluated and
 * their guidelines written. Then, when the step runs, the partition's applied revisions are
 * measured (`learn/review/effect.ts`, the check `LessonManager.effects` runs) and, under
 * `undoFlagged`, one whose effect is nil or negative is undone with the reason recorded; an
 * `effect` signal (a revised tool with enough new evidence, counted by the tally) runs the step
 * for that alone. Skipped when classify found nothing; nothing passes outside graph
 * state (the review's work is one function call).
 *
 * Every store and model call here is bounded (`withinBound`): past the bound, or on a failure, the
 * turn goes on without what was being learned and the failure is reported once per kind. A review
 * past its bound finishes in the background (its revision is stored, and applied under
 * `autoApply`, when it settles).
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { withinBound } from "../failure.js";
import type { RevisionEffect } from "../learn/effect.js";
import { checkEffects, DEFAULT_EFFECT_CHECK } from "../learn/review/effect.js";
import { runReview } from "../learn/review/run.js";
import type { EvidenceTally } from "../learn/review/tally.js";
import type { Ledger } from "../ledger/ledger.js";
import { ToolMemory } from "../memory/tool-memory.js";
import { latestHumanTurn } from "../caller/request.js";
import { recordEdicts } from "../rules/store.js";
import { finishedTurns } from "./classify.js";
import type { ToolLessons } from "../app/app.js";
import { DEFAULT_TOOL_LESSONS } from "../app/options.js";
import { emptyReport, type LessonSignal, type LessonsReport } from "./state.js";

/** Partitions an {@link EffectScope} remembers having measured once (per store). */
const MAX_PARTITIONS_SEEN = 10_000;

/** The signal kind an effect check answers. */
const EFFECT_SIGNALS: ReadonlySet<LessonSignal["kind"]> = new Set(["effect"]);

/** The signal kinds a review answers. */
export const REVIEW_SIGNALS: ReadonlySet<LessonSignal["kind"]> = new Set(["failure", "miss", "confusion"]);

/** The state the learn node reads. */
export interface LearnState {
  messages: BaseMessage[];
  lessonSignals?: LessonSignal[];
  lessonsReport?: LessonsReport;
}

/** Tools named by the signals of these kinds, in first-seen order. */
export function signalledTools(signals: readonly LessonSignal[], kinds: ReadonlySet<LessonSignal["kind"]>): string[] {
  return [...new Set(signals.filter((s) => kinds.has(s.kind)).flatMap((s) => s.tools))];
}

/**
 * The learn node. `tally` is the one classify reads: after a review it is told the partition's
 * evidence rules (its stored settings), so later counts are held to them.
 */
export function createLearnNode(app: ToolLessons) {
  const tally = app.tally;
  const names = app.tools.map((t) => t.name);
  const registered = new Set(names);
  const autoApply = app.options.autoApply ?? DEFAULT_TOOL_LESSONS.autoApply;
  const undoFlagged = app.options.undoFlagged ?? DEFAULT_TOOL_LESSONS.undoFlagged;
  const effects = new EffectScope(tally);
  // The graph's own bound (`timeoutMs`), for each store and model call of the step.
  const bound = app.timeoutMs;
  return async function learn(state: LearnState, config?: RunnableConfig) {
    const signals = state.lessonSignals ?? [];
    const review = signalledTools(signals, REVIEW_SIGNALS).filter((t) => registered.has(t));
    const memory = signalledTools(signals, new Set(["memory"])).filter((t) => registered.has(t));
    const edicts = signals.some((s) => s.kind === "edict");
    const effect = signalledTools(signals, EFFECT_SIGNALS).filter((t) => registered.has(t));
    if (review.length === 0 && memory.length === 0 && !edicts && effect.length === 0) return {};
    let ledger: Ledger | undefined;
    let partition: string;
    try {
      ({ ledger, partition } = app.context(config));
    } catch (error) {
      app.report("learn:caller", "the caller's ids were refused; nothing is learned for this turn.", error);
      return {};
    }
    if (!ledger) return {};
    const report = { ...(state.lessonsReport ?? emptyReport()) };
    report.refused = [...report.refused];
    const failed = (kind: string, message: string, error: unknown): void => {
      app.report(kind, message, error);
      report.ledgerFailed = true;
    };

    if (edicts) {
      try {
        const turn = latestHumanTurn(state.messages);
        // An edict that names no tool ("don't do that again") binds the first tool the thread's last turn ran.
        const calledTools = (finishedTurns(state.messages).at(-1)?.calls ?? []).map((c) => c.tool);
        const recorded = await withinBound(
          recordEdicts(ledger, { partition, text: turn?.text ?? "", tools: names, calledTools }, config),
          bound,
          { stage: "learn", kind: "edicts" },
        );
        report.rules = recorded.stored.map((r) => r.id);
        for (const r of recorded.refused) report.refused.push({ tool: "*", reason: r.refused });
      } catch (error) {
        failed("learn:edicts", "storing this turn's edicts failed; the turn goes on without them.", error);
      }
    }

    if (review.length > 0 || effect.length > 0) {
      // The records of the runs before this turn, as far as the recorder can write them in the bound.
      await app.recorderToFlush
        ?.flush({ timeoutMs: bound })
        .catch((error: unknown) =>
          app.report("learn:flush", "flushing the recorder failed; learning reads what was written.", error),
        );
    }
    // The learn step runs anyway (or a revised tool has enough new evidence): judge the lessons in
    // place before a review adds to them (one undone under `undoFlagged` is then not proposed again).
    const check = effects.tools(ledger, partition, [...effect, ...review]);
    if (check) {
      try {
        const found = await withinBound(
          checkEffects({ ledger, index: app.index(ledger) }, partition, {
            ...(check.all ? {} : { tools: check.tools }),
            undoFlagged,
            by: DEFAULT_EFFECT_CHECK.by,
          }),
          bound,
          { stage: "learn", kind: "effects" },
        );
        report.effects = found.map((e) => ({ revision: e.id, tool: e.tool, verdict: e.verdict, flagged: !!e.flag }));
        report.undone = found.filter((e) => e.undone).map((e) => e.id);
        effects.measured(partition, found, check);
      } catch (error) {
        failed(
          "learn:effects",
          "measuring the applied lessons' effect failed or ran past its bound; the turn goes on.",
          error,
        );
      }
    }
    if (review.length > 0) {
      try {
        const index = app.index(ledger);
        const done = await withinBound(
          runReview(
            { ledger, index, proposer: app.proposer },
            { partition, tools: review },
            {
              autoApply,
              onApplyError: (_revision, error) =>
                app.report("learn:apply", "applying a vetted revision failed; it waits for an operator.", error),
            },
            config,
          ),
          bound,
          { stage: "learn", kind: "review" },
        );
        report.proposed = done.revisions.map((r) => r.id);
        const applied = done.revisions.filter((r) => r.status === "applied");
        report.applied = applied.map((r) => r.id);
        // Just applied: nothing to judge yet; count the tools' evidence from now on.
        tally.watch(
          partition,
          applied.map((r) => r.tool),
        );
        for (const r of done.refused) report.refused.push({ tool: r.tool, reason: r.refusal.reason });
        tally.setRules(
          partition,
          await withinBound(ledger.getSettings(partition), bound, { stage: "learn", kind: "settings" }),
        );
      } catch (error) {
        failed(
          "learn:review",
          "learning from the partition's records failed or ran past its bound; the turn goes on.",
          error,
        );
      }
    }

    if (memory.length > 0) {
      try {
        const toolMemory = new ToolMemory({ ledger });
        const summary = await withinBound(
          async () => {
            await toolMemory.evaluate(partition, { tools: memory }, config);
            return toolMemory.summarize(partition, { tools: memory }, config);
          },
          bound,
          { stage: "learn", kind: "memory" },
        );
        report.guidelines = summary.tools.filter((t) => t.status === "summarized").map((t) => t.tool);
      } catch (error) {
        failed("learn:memory", "the tools' memory pass failed or ran past its bound; the turn goes on.", error);
      }
    }
    return { lessonsReport: report };
  };
}

/**
 * Which applied revisions a learn step measures, so that no quiet turn pays for it: on the first
 * learn step of a partition, every tool's (the tally learns which tools are revised); later, the
 * tools signalled for an effect check or reviewed this turn (a revision the step applies is watched
 * from then on). What is judged stops being watched; what has not enough data yet is watched.
 */
class EffectScope {
  private readonly seen = new WeakMap<object, Set<string>>();
  constructor(private readonly tally: EvidenceTally) {}

  tools(ledger: Ledger, partition: string, tools: readonly string[]): { all: boolean; tools: string[] } | undefined {
    let partitions = this.seen.get(ledger.store);
    if (!partitions) this.seen.set(ledger.store, (partitions = new Set()));
    const first = !partitions.has(partition);
    // Bounded: past it, a partition's next learn step measures every tool's revisions again.
    if (first && partitions.size >= MAX_PARTITIONS_SEEN) partitions.clear();
    partitions.add(partition);
    if (first) return { all: true, tools: [] };
    const unique = [...new Set(tools)];
    return unique.length > 0 ? { all: false, tools: unique } : undefined;
  }

  measured(partition: string, found: readonly RevisionEffect[], check: { all: boolean; tools: string[] }): void {
    const waiting = new Set(found.filter((e) => e.verdict === "not_enough_data" && !e.undone).map((e) => e.tool));
    const judged = new Set([...(check.all ? [] : check.tools), ...found.map((e) => e.tool)]);
    this.tally.unwatch(
      partition,
      [...judged].filter((t) => !waiting.has(t)),
    );
    this.tally.watch(partition, [...waiting]);
  }
}
