/**
 * synthesize: lessons proposed from classify's signals, through the review's stages
 * (`learn/review/`: gather → detect → select → evidence → propose) for the signalled tools of the
 * caller's partition, with the configured model or the deterministic proposer; and, on a memory
 * signal, the tools' calls evaluated and their guidelines written (tool memory vets its own).
 * Skipped when classify found nothing to learn from. What it proposed is handed to vet in memory,
 * never through the checkpointed state.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { detect } from "../learn/detect.js";
import { buildEvidence, reviewRouting, type ReviewRouting, type ToolReviewEvidence } from "../learn/review/evidence.js";
import { gatherWindow, type ReviewWindow } from "../learn/review/gather.js";
import { type Proposed, proposeLessons } from "../learn/review/propose.js";
import { selectDue } from "../learn/review/select.js";
import { DEFAULT_EXAMPLE_OBJECTIVE } from "../learn/what-if.js";
import { ToolMemory } from "../memory/tool-memory.js";
import { requestIdFor } from "../record/request.js";
import type { LessonsRuntime } from "./context.js";
import { emptyReport, type LessonSignal, type LessonsReport } from "./state.js";

/** The signal kinds a review answers. */
export const REVIEW_SIGNALS: ReadonlySet<LessonSignal["kind"]> = new Set(["failure", "miss", "confusion"]);

/** What synthesize hands to vet for one turn. */
export interface SynthesizedWork {
  partition: string;
  window: ReviewWindow;
  routing: ReviewRouting;
  proposals: { evidence: ToolReviewEvidence; proposed: Proposed }[];
}

/** The state synthesize and vet read. */
export interface LearnState {
  messages: BaseMessage[];
  lessonSignals?: LessonSignal[];
  lessonsReport?: LessonsReport;
}

/** Most turns' work kept between synthesize and vet (a run stopped in between leaves its entry). */
const MAX_HANDOFF = 256;

/** The key of a turn's work: thread and request. */
export function turnKey(state: { messages: BaseMessage[] }, config: RunnableConfig | undefined): string {
  const threadId = config?.configurable?.thread_id as string | undefined;
  return `${threadId ?? ""}\u0000${requestIdFor(threadId, state.messages) ?? ""}`;
}

/** Tools named by the signals of these kinds, in first-seen order. */
export function signalledTools(signals: readonly LessonSignal[], kinds: ReadonlySet<LessonSignal["kind"]>): string[] {
  return [...new Set(signals.filter((s) => kinds.has(s.kind)).flatMap((s) => s.tools))];
}

/** The synthesize node. */
export function createSynthesizeNode(runtime: LessonsRuntime) {
  const registered = new Set(runtime.options.tools.map((t) => t.name));
  return async function synthesize(state: LearnState, config?: RunnableConfig) {
    const signals = state.lessonSignals ?? [];
    const review = signalledTools(signals, REVIEW_SIGNALS).filter((t) => registered.has(t));
    const memory = signalledTools(signals, new Set(["memory"])).filter((t) => registered.has(t));
    if (review.length === 0 && memory.length === 0) return {};
    const report = { ...(state.lessonsReport ?? emptyReport()) };
    const { ledger, partition } = runtime.context(config);
    if (!ledger) return {};
    try {
      await runtime.options.recorder?.flush({ timeoutMs: runtime.timeoutMs });
      if (review.length > 0) {
        const window = await gatherWindow(ledger, partition);
        const detection = detect({
          turns: window.turns,
          routes: window.routes,
          calls: window.calls,
          tools: window.cards.map((c) => c.name),
          settings: window.settings,
        });
        const selection = selectDue({
          ...window,
          detection,
          callsModel: runtime.proposer.callsModel !== false,
          tools: review,
        });
        const routing = reviewRouting(window, runtime.index(ledger), DEFAULT_EXAMPLE_OBJECTIVE);
        const proposals: SynthesizedWork["proposals"] = [];
        for (const due of selection.due) {
          const evidence = await buildEvidence(routing, window, due);
          const proposed = await proposeLessons(runtime.proposer, evidence.evidence, due.detection, config);
          proposals.push({ evidence, proposed });
        }
        if (proposals.length > 0) {
          const work: SynthesizedWork = { partition, window, routing, proposals };
          runtime.handoff.set(turnKey(state, config), work);
          if (runtime.handoff.size > MAX_HANDOFF) runtime.handoff.delete(runtime.handoff.keys().next().value as string);
        }
      }
      if (memory.length > 0) {
        const toolMemory = new ToolMemory({ ledger });
        await toolMemory.evaluate(partition, { tools: memory }, config);
        const summary = await toolMemory.summarize(partition, { tools: memory }, config);
        report.guidelines = summary.tools.filter((t) => t.status === "summarized").map((t) => t.tool);
      }
    } catch (error) {
      runtime.report("learn", "learning from this thread's last turn failed; the turn goes on.", error);
      report.ledgerFailed = true;
    }
    return { lessonsReport: report };
  };
}
