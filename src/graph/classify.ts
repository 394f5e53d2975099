/**
 * classify: what the new user turn and the thread's last turns hold that is worth learning from.
 * Code only: the new turn is searched for edicts (`rules/capture.ts`), and the thread's own
 * messages since its last turns (what the recorder wrote to the ledger for them, as the thread
 * saw it: which tools ran and which failed) for repeated failures, misses, confusions and enough
 * calls for a memory pass. A quiet turn costs no model call and no ledger read at all.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { latestHumanTurn, messageRole, requestIdFor } from "../record/request.js";
import { findEdicts } from "../rules/capture.js";
import { DEFAULT_LESSONS_GRAPH, type LessonsRuntime } from "./context.js";
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
}

/** The signals of a turn and the new call count. Pure. */
export function classifyTurn(input: ClassifyInput): { signals: LessonSignal[]; callsSince: number } {
  const signals: LessonSignal[] = [];
  const turn = latestHumanTurn(input.messages);
  if (turn && findEdicts(turn.text, { tools: input.tools }).length > 0) signals.push({ kind: "edict", tools: [] });
  const turns = finishedTurns(input.messages);
  const last = turns.at(-1);
  const before = turns.at(-2);
  if (last) {
    const failed = unique(last.calls.filter((c) => !c.ok).map((c) => c.tool));
    if (failed.length > 0) signals.push({ kind: "failure", tools: failed });
    if (before && last.servedBy !== undefined) {
      if (!before.calls.some((c) => c.tool === last.servedBy)) signals.push({ kind: "miss", tools: [last.servedBy] });
      if (before.servedBy !== undefined && before.servedBy !== last.servedBy)
        signals.push({ kind: "confusion", tools: [before.servedBy] });
    }
  }
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
 * The classify node: sets `lessonSignals` (empty on a quiet turn) and `lessonsTurn`. It runs once
 * per user turn: on a later model step of the same turn (a pre-model hook) it returns nothing.
 */
export function createClassifyNode(runtime: LessonsRuntime) {
  const tools = runtime.options.tools.map((t) => t.name);
  const memoryEvery = runtime.options.memoryEvery ?? DEFAULT_LESSONS_GRAPH.memoryEvery;
  return async function classify(state: ClassifyState, config?: RunnableConfig) {
    const threadId = config?.configurable?.thread_id as string | undefined;
    const requestId = requestIdFor(threadId, state.messages) ?? "";
    if (requestId === "" || requestId === state.lessonsTurn) return { lessonSignals: [] };
    const { signals, callsSince } = classifyTurn({
      messages: state.messages,
      tools,
      callsSince: state.lessonsCalls ?? 0,
      memoryEvery,
    });
    // A new turn starts a new report: what the nodes did on the thread's previous turn is not this one's.
    return { lessonSignals: signals, lessonsCalls: callsSince, lessonsReport: emptyReport() };
  };
}
