/**
 * classify: what is worth learning from before this turn. Code only: the new turn is searched for
 * edicts (`rules/capture.ts`); the caller's partition's evidence, counted as its records were
 * written by every thread (`learn/review/tally.ts`), names the tools whose refused calls, misses
 * or confusions since their last review reach the evidence rules; the thread's own messages count
 * the calls since its last memory pass; the same tally says when a revised tool has had enough new
 * evidence for its effect to be checked. A quiet turn costs no model call and no ledger read at all.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { MIN_EFFECT_OPPORTUNITIES } from "../learn/effect.js";
import type { DueTally, EvidenceTally } from "../learn/review/tally.js";
import { latestHumanTurn, messageRole, requestIdFor } from "../caller/request.js";
import { findEdicts } from "../rules/capture.js";
import type { RunContext, ToolLessons } from "../app/app.js";
import { DEFAULT_TOOL_LESSONS } from "../app/options.js";
import { emptyReport, type LessonSignal } from "./state.js";

/** One finished turn of a thread as its messages show it. */
export interface TurnView {
  /** Tools called, in order, each with whether it succeeded. */
  calls: { tool: string; ok: boolean }[];
  /** The last tool that succeeded (the one that served the request), if any. */
  servedBy?: string;
}

/** The thread's finished turns (before the newest human message), oldest first. */
export function finishedTurns(messages: readonly BaseMessage[]): TurnView[] {
  const turns: TurnView[] = [];
  let current: TurnView | undefined;
  const names = new Map<string, string>();
  const latest = latestHumanTurn(messages)?.index ?? messages.length;
  for (let i = 0; i < latest; i++) {
    const message = messages[i];
    const role = messageRole(message);
    if (role === "human" || role === "user") {
      current = { calls: [] };
      turns.push(current);
      continue;
    }
    if (!current) continue;
    if (role === "ai") {
      for (const call of (message as { tool_calls?: { id?: string; name?: string }[] }).tool_calls ?? []) {
        if (typeof call.name === "string" && typeof call.id === "string") names.set(call.id, call.name);
      }
    } else if (role === "tool") {
      const m = message as { tool_call_id?: string; name?: string; status?: string };
      const tool = m.name ?? (m.tool_call_id ? names.get(m.tool_call_id) : undefined);
      if (tool === undefined) continue;
      const ok = m.status !== "error";
      current.calls.push({ tool, ok });
      if (ok) current.servedBy = tool;
    }
  }
  return turns;
}

/** Input of {@link classifyTurn}. */
export interface ClassifyInput {
  /** The thread's messages, ending in the new user turn. */
  messages: readonly BaseMessage[];
  /** The registered tool names (edicts are scoped to them). */
  tools: readonly string[];
  /** Tool calls counted since the thread's last memory pass (before this turn). */
  callsSince: number;
  /** Calls after which a memory pass is due. */
  memoryEvery: number;
  /**
   * The tools of the caller's partition whose evidence since their last review reached a rule
   * (see {@link EvidenceTally.due}), whatever threads it came from.
   * @default none
   */
  due?: readonly DueTally[];
  /**
   * The revised tools of the partition with enough new evidence for an effect check (see
   * {@link EvidenceTally.effectDue}).
   * @default none
   */
  effectDue?: readonly string[];
}

/** The signals of a turn and the new call count. Pure. */
export function classifyTurn(input: ClassifyInput): { signals: LessonSignal[]; callsSince: number } {
  const signals: LessonSignal[] = [];
  const turn = latestHumanTurn(input.messages);
  if (turn && findEdicts(turn.text, { tools: input.tools }).length > 0) signals.push({ kind: "edict", tools: [] });
  for (const kind of ["failure", "miss", "confusion"] as const) {
    const tools = (input.due ?? []).filter((d) => d.kinds.includes(kind)).map((d) => d.tool);
    if (tools.length > 0) signals.push({ kind, tools });
  }
  if (input.effectDue && input.effectDue.length > 0) signals.push({ kind: "effect", tools: [...input.effectDue] });
  const turns = finishedTurns(input.messages);
  const last = turns.at(-1);
  let callsSince = input.callsSince + (last?.calls.length ?? 0);
  if (last && callsSince >= input.memoryEvery) {
    const recent = unique(turns.slice(-Math.max(1, input.memoryEvery)).flatMap((t) => t.calls.map((c) => c.tool)));
    signals.push({ kind: "memory", tools: recent });
    callsSince = 0;
  }
  return { signals, callsSince };
}

function unique(names: readonly string[]): string[] {
  return [...new Set(names)];
}

/** The state classify reads. */
export interface ClassifyState {
  messages: BaseMessage[];
  lessonsTurn?: string;
  lessonsCalls?: number;
}

/**
 * What classify decides for a new turn, given the run's context (`undefined`: the caller's ids
 * were refused, and nothing is learned for the turn): the signals and the new call count.
 *
 * The partition's evidence comes from `tally`, fed in process as the ledger's turn and route
 * records are written (every thread's); the first turn seen on a ledger starts the feed. A tool
 * found due is taken off the tally at once, so one turn reviews it.
 */
export function createClassifier(app: ToolLessons) {
  const tools = app.tools.map((t) => t.name);
  const memoryEvery = app.options.memoryEvery ?? DEFAULT_TOOL_LESSONS.memoryEvery;
  const tally = app.tally;
  return function classify(state: ClassifyState, context: RunContext | undefined) {
    let due: DueTally[] = [];
    let effectDue: string[] = [];
    if (context) {
      const { partition } = context;
      due = tally.due(partition);
      if (due.length > 0)
        tally.reviewed(
          partition,
          due.map((d) => d.tool),
        );
      effectDue = tally.effectDue(partition, MIN_EFFECT_OPPORTUNITIES);
    }
    return classifyTurn({
      messages: state.messages,
      tools,
      callsSince: state.lessonsCalls ?? 0,
      memoryEvery,
      due,
      effectDue,
    });
  };
}

/**
 * The classify node: sets `lessonSignals` (empty on a quiet turn) and `lessonsTurn`. It runs once
 * per user turn: on a later model step of the same turn (a pre-model hook) it returns nothing.
 */
export function createClassifyNode(app: ToolLessons) {
  const classifier = createClassifier(app);
  return async function classify(state: ClassifyState, config?: RunnableConfig) {
    const threadId = config?.configurable?.thread_id as string | undefined;
    const requestId = requestIdFor(threadId, state.messages) ?? "";
    if (requestId === "" || requestId === state.lessonsTurn) return { lessonSignals: [] };
    // Refused ids: inject reports them; nothing is learned for this turn.
    const { signals, callsSince } = classifier(state, app.tryContext(config));
    // A new turn starts a new report: what the nodes did on the thread's previous turn is not this one's.
    return { lessonSignals: signals, lessonsCalls: callsSince, lessonsReport: emptyReport() };
  };
}
