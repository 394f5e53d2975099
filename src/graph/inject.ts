/**
 * inject: what the agent sees this turn, served by `src/serve/` and adapted to graph state. The
 * routed tool set (top `maxTools` for the request, plus the tools the thread already uses, plus
 * `alwaysInclude`), recorded as the turn's route; the routed tools' cards as the model is shown
 * them (`routedCards`: the agent node binds each tool described by its card, see
 * `bindRoutedTools`); and one system block (`lessonsPrompt`, `prompt/lessons-block.ts`): the
 * pinned rules, the normal-priority rules retrieved for the request and the routed tools'
 * guidelines.
 *
 * Degrades, never breaks: routing failing (embeddings or the index down) gives every tool and is
 * recorded as a turn routing skipped; the ledger failing or running past the bound gives an empty
 * block. Each is reported once, through the graph's `failureSink`.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseStore } from "@langchain/langgraph";
import type { ToolCard } from "../ledger/schema.js";
import { requestIdFor } from "../caller/request.js";
import { DEFAULT_SERVE } from "../serve/options.js";
import { describerOf, growKept, type KeptTool } from "../serve/tool-set.js";
import type { ToolLessons } from "../app/app.js";
import { emptyReport, type LessonsReport } from "./state.js";

/** The state inject reads. */
export interface InjectState {
  messages: BaseMessage[];
  lessonsTurn?: string;
  lessonsReport?: LessonsReport;
  /** The thread's kept tools (cache-keeping mode). */
  keptTools?: KeptTool[];
}

/** The steps of serving that read or write the ledger: one failing sets the report's `ledgerFailed`. */
const LEDGER_STEPS: ReadonlySet<string> = new Set(["register", "route_record", "ledger_read"]);

/** What inject writes. */
export interface InjectUpdate {
  routedTools: string[];
  routedCards: ToolCard[];
  lessonsPrompt: string;
  lessonsTurn: string;
  lessonsReport: LessonsReport;
  /** Cache-keeping mode: the thread's kept tools grown by this turn's (unset otherwise). */
  keptTools?: KeptTool[];
}

/**
 * Serve the turn and adapt it to graph state (`undefined` when the messages hold no user turn).
 * `partition`: the caller, when the node resolved it already this run.
 */
export async function injectTurn(
  app: ToolLessons,
  state: InjectState,
  config: RunnableConfig | undefined,
  partition?: string,
): Promise<InjectUpdate | undefined> {
  const store = (config as { store?: BaseStore } | undefined)?.store;
  const keeping = app.options.cacheKeeping ?? DEFAULT_SERVE.cacheKeeping;
  const kept = state.keptTools ?? [];
  const served = await app.server.serve(
    {
      messages: state.messages,
      tools: app.tools,
      // The graph's classify and vet capture edicts; serving does not capture them a second time.
      captureEdicts: false,
      ...(keeping ? { kept: kept.map((t) => t.name) } : {}),
      ...(partition !== undefined ? { partition } : {}),
      ...(store ? { store } : {}),
    },
    config,
  );
  if (served.status === "no_turn" || served.requestId === undefined) return undefined;
  const report: LessonsReport = {
    ...(state.lessonsReport ?? emptyReport()),
    routing: served.tools ? "routed" : "all_tools",
    ledgerFailed: (state.lessonsReport?.ledgerFailed ?? false) || served.failed.some((kind) => LEDGER_STEPS.has(kind)),
    blockTokens: served.block.tokens,
    cut: served.block.cut,
  };
  const all = app.tools.map((t) => t.name);
  // Cache-keeping: the turn's tools join the thread's set, each frozen as it is described now.
  const keptTools = keeping
    ? [...growKept(kept, served.tools ?? all, describerOf(app.tools, served.shownCards), new Set(all))]
    : undefined;
  return {
    ...(keptTools ? { keptTools } : {}),
    routedTools: served.tools ?? all,
    routedCards: served.shownCards,
    lessonsPrompt: served.block.text,
    lessonsTurn: served.requestId,
    lessonsReport: report,
  };
}

/** The inject node: sets `routedTools`, `routedCards`, `lessonsPrompt`, `lessonsTurn` and the report. */
export function createInjectNode(app: ToolLessons) {
  return async function inject(state: InjectState, config?: RunnableConfig): Promise<Partial<InjectUpdate>> {
    const threadId = config?.configurable?.thread_id as string | undefined;
    const requestId = requestIdFor(threadId, state.messages);
    // Once per user turn: a later model step of the same turn (a pre-model hook) changes nothing.
    if (requestId === undefined || requestId === state.lessonsTurn) return {};
    return (await injectTurn(app, state, config)) ?? {};
  };
}
