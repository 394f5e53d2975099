import type { BaseMessage } from "@langchain/core/messages";
import { Annotation, MessagesAnnotation, MessagesZodMeta } from "@langchain/langgraph";
import { withLangGraph } from "@langchain/langgraph/zod";
import { z } from "zod";
import type { EffectVerdict } from "../learn/effect.js";
import type { ToolCard } from "../ledger/schema.js";
import type { KeptTool } from "../serve/tool-set.js";

/**
 * What classify found for one turn: the kinds of signal and the tools they are about. Names and
 * counts only, never a user's text (the turn itself is in `messages`).
 */
export interface LessonSignal {
  /**
   * `edict`: the new user turn tells the agent never to do something; `failure`, `miss`,
   * `confusion`: the tools' refused calls, missed requests or requests that went to them wrongly
   * since their last review reached `minFailures`, `minMisses` or `minConfusions` in the caller's
   * partition, over every thread (a review of them runs this turn); `memory`: enough calls in
   * this thread since its last memory pass for a guideline; `effect`: a tool with an applied
   * revision not yet judged has had `MIN_EFFECT_OPPORTUNITIES` calls, misses and confusions since
   * its effect was last checked (the check runs this turn).
   */
  kind: "edict" | "failure" | "miss" | "confusion" | "memory" | "effect";
  /** The tools it is about (`[]` for an edict: its tool is decided when it is stored). */
  tools: string[];
}

/** What the lessons nodes did this turn, for the application to read or log. Small by design. */
export interface LessonsReport {
  /** `routed`: top-k plus sticky plus always-offer; `all_tools`: routing failed or was not possible. */
  routing: "routed" | "all_tools";
  /** Whether reading or writing the ledger failed during the turn (the turn went on without it). */
  ledgerFailed: boolean;
  /** Ids of the revisions proposed this turn. */
  proposed: string[];
  /** Ids of the revisions applied this turn (under `autoApply`). */
  applied: string[];
  /** Ids of the rules stored this turn from the user's edicts. */
  rules: string[];
  /** What the vet refused this turn: the tool and the reason code, never the text. */
  refused: { tool: string; reason: string }[];
  /** Guidelines written this turn, by tool. */
  guidelines: string[];
  /**
   * Applied revisions measured this turn (when the learn step ran): the revision, its tool and
   * the verdict (`helped`, `no_effect`, `hurt`, `not_enough_data`), and whether it is flagged.
   * Counts are in the ledger (`LessonManager.effects`); nothing here holds a value or a request.
   */
  effects: { revision: string; tool: string; verdict: EffectVerdict; flagged: boolean }[];
  /** Ids of the revisions undone this turn because their effect was nil or negative (`undoFlagged`). */
  undone: string[];
  /** The injected block's estimated size in tokens. */
  blockTokens: number;
  /** What the token budget cut, by step of the cut order. */
  cut: { step: string; count: number }[];
}

/** A report where nothing happened. */
export function emptyReport(): LessonsReport {
  return {
    routing: "routed",
    ledgerFailed: false,
    proposed: [],
    applied: [],
    rules: [],
    refused: [],
    guidelines: [],
    effects: [],
    undone: [],
    blockTokens: 0,
    cut: [],
  };
}

const last = <T>(fallback: () => T) => Annotation<T>({ reducer: (_previous, next) => next, default: fallback });

/**
 * The fields the lessons subgraph reads and writes, to spread into your own annotation
 * (`Annotation.Root({ ...MessagesAnnotation.spec, ...LessonsStateFields })`). Each is a small
 * value overwritten every turn, so checkpoints stay small: no card, no record is kept in state.
 */
export const LessonsStateFields = {
  /** Names of the tools to bind this turn (set by the route or inject node). */
  routedTools: last<string[]>(() => []),
  /** The system message text the inject node rendered for this turn (`""`: nothing to add). */
  lessonsPrompt: last<string>(() => ""),
  /** The request id the lessons nodes last ran for (they run once per user turn). */
  lessonsTurn: last<string>(() => ""),
  /** What classify found this turn. */
  lessonSignals: last<LessonSignal[]>(() => []),
  /** Tool calls seen since the last memory pass of this thread. */
  lessonsCalls: last<number>(() => 0),
  /** What the nodes did this turn. */
  lessonsReport: last<LessonsReport>(emptyReport),
  /**
   * The routed tools' cards cut to what the model is shown (only those that change it), set by
   * the inject or route node: what `bindRoutedTools` describes the tools with. Empty on a turn
   * where nothing was learned about the routed tools.
   */
  routedCards: last<ToolCard[]>(() => []),
  /**
   * Cache-keeping mode (`cacheKeeping`): the thread's tools in the order they were added, each with
   * the description it was first sent with; it only grows within a thread. Empty otherwise.
   */
  keptTools: last<KeptTool[]>(() => []),
};

/**
 * Graph state for an agent with routed tools and lessons: LangGraph's messages, the tools routed
 * for the current turn and the lessons fields. Spread `ToolLessonsAnnotation.spec` into your own
 * annotation to add fields.
 */
export const ToolLessonsAnnotation = Annotation.Root({
  ...MessagesAnnotation.spec,
  ...LessonsStateFields,
});
export type ToolLessonsState = typeof ToolLessonsAnnotation.State;

const SignalSchema = z.object({
  kind: z.enum(["edict", "failure", "miss", "confusion", "memory", "effect"]),
  tools: z.array(z.string()),
});

/**
 * The same state in zod form, for graphs declared with zod (`new StateGraph(ToolLessonsZodState)`,
 * or `ToolLessonsZodState.extend({...})`; zod 4). Fields without a reducer keep the last value written.
 */
export const ToolLessonsZodState = z.object({
  messages: withLangGraph(z.custom<BaseMessage[]>(), MessagesZodMeta),
  routedTools: z.array(z.string()).default([]),
  lessonsPrompt: z.string().default(""),
  lessonsTurn: z.string().default(""),
  lessonSignals: z.array(SignalSchema).default([]),
  lessonsCalls: z.number().default(0),
  lessonsReport: z.custom<LessonsReport>().default(emptyReport),
  routedCards: z.custom<ToolCard[]>().default(() => []),
  keptTools: z.array(z.object({ name: z.string(), description: z.string() })).default([]),
});
