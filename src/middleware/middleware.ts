/**
 * The `createAgent` middleware (langchain v1): on every model call of an agent built with
 * `createAgent({ model, tools, middleware: [toolLessonsMiddleware({ ledger })] })`, the tools
 * routed for the caller's request, each described as its card says, and the lessons block
 * (pinned rules, retrieved rules, guidelines) after the app's system prompt. Serving the request
 * is `src/serve/`'s, once per request; this file only adapts langchain's model request to it.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseStore } from "@langchain/langgraph";
import { getConfig } from "@langchain/langgraph";
import { Command } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { z } from "zod";
import type { ToolSource } from "../ledger/cards.js";
import { SHOW_EXAMPLES } from "../prompt/describe.js";
import { resolveThreadCaller } from "../caller/thread-callers.js";
import { requestIdFor } from "../caller/request.js";
import { appForView, type ToolLessons } from "../app/app.js";
import { DEFAULT_SERVE, type ServeOptions } from "../serve/options.js";
import { withLessonsBlock } from "../serve/system-message.js";
import { cacheModeOf, withSearchCalls } from "../serve/provider-mode.js";
import { describerOf, keptForCall, type KeptTool, SEARCH_TOOLS_NAME } from "../serve/tool-set.js";
import { TurnServer } from "../serve/turn-server.js";
import type { ServeConfig, ServedTurn } from "../serve/types.js";
import { deferredCall, type RequestTool, requestToolName, toolsForModel } from "./tools-view.js";

/** Options of {@link toolLessonsMiddleware}: those of serving a turn, and the middleware's name. */
export interface ToolLessonsMiddlewareOptions extends ServeOptions {
  /**
   * The app this middleware is a view over (`createToolLessons({ ledger, ... })`), shared with
   * the manager, the recorder and other views. With it, pass no serving options here.
   * @default one made from these options (`middleware.app`)
   */
  app?: ToolLessons;
  /**
   * The middleware's name in the agent (and in langchain's errors).
   * @default "ToolLessonsMiddleware"
   */
  name?: string;
}

/** The defaults of {@link ToolLessonsMiddlewareOptions} (serving's, and the name). */
export const DEFAULT_TOOL_LESSONS_MIDDLEWARE = Object.freeze({ ...DEFAULT_SERVE, name: "ToolLessonsMiddleware" });

/** Requests whose serving is kept (every model call of a request reuses it); the oldest is dropped past it. */
const KEPT_REQUESTS = 1000;

/**
 * The middleware for langchain v1's `createAgent`, shaped like langchain's own
 * `llmToolSelectorMiddleware({ maxTools, alwaysInclude })`: on each model call it narrows the
 * agent's tools to those routed for the caller's request (top `maxTools`, plus `alwaysInclude`,
 * plus tools the thread already uses), sends each with what its card says the model is shown
 * (the author's description, then "Learned from use:" lines), and appends the lessons block to
 * the system message. Once per request: the user's edicts are captured, what routing offered is
 * recorded (route records join the recorder's turn on its request id), and the ledger's
 * `ThreadCallers` tell the recorder (whose callbacks see no `context`) where the thread's calls go.
 *
 * Degrades, never breaks: when routing, the ledger or a caller's ids fail or run past
 * `timeoutMs`, the model call goes on with every tool (or the authors' descriptions), reported
 * once per kind through `failureSink`.
 *
 * ```ts
 * const agent = createAgent({
 *   model,
 *   tools,
 *   middleware: [toolLessonsMiddleware({ ledger, maxTools: 4 })],
 *   checkpointer,
 * });
 * await agent.invoke({ messages }, { configurable: { thread_id }, context: { user_id }, callbacks: [recorder] });
 * ```
 */
export function toolLessonsMiddleware(options: ToolLessonsMiddlewareOptions = {}) {
  const { app: given, name, ...serving } = options;
  const app = appForView("toolLessonsMiddleware", given, serving);
  const server = app.server;
  const served = new Map<string, Promise<ServedTurn>>();

  /** Serve the request once; every model call of the request reuses it. */
  function serve(
    request: {
      messages: Parameters<TurnServer["serve"]>[0]["messages"];
      tools: readonly RequestTool[];
      runtime: unknown;
    },
    kept?: readonly KeptTool[],
  ): Promise<ServedTurn> {
    const runtime = request.runtime as RuntimeView;
    const config = configOf(runtime);
    // Built only when the request is served (a later model call of a kept request needs none of it).
    const input = () => ({
      messages: request.messages,
      tools: agentTools(request.tools),
      ...(runtime.store ? { store: runtime.store } : {}),
      ...(kept ? { kept: kept.map((t) => t.name) } : {}),
    });
    const threadId = typeof config.configurable?.thread_id === "string" ? config.configurable.thread_id : undefined;
    const requestId = requestIdFor(threadId, request.messages);
    let caller: string | undefined;
    try {
      // Resolved once for the request (and remembered for the thread, for the recorder); serving takes it as given.
      const ledger = app.ledgerFor(runtime.store);
      caller = resolveThreadCaller(config, app.options.partition, threadId, ledger?.callers);
    } catch {
      // Refused ids: served (and reported) without keeping anything.
    }
    if (requestId === undefined || caller === undefined) return server.serve(input(), config);
    const key = `${caller}\u0000${threadId ?? ""}\u0000${requestId}`;
    let pending = served.get(key);
    if (!pending) {
      pending = server.serve({ ...input(), partition: caller }, config);
      served.set(key, pending);
      if (served.size > KEPT_REQUESTS) served.delete(served.keys().next().value as string);
    }
    return pending;
  }

  const keeping = app.options.cacheKeeping ?? DEFAULT_SERVE.cacheKeeping;
  const search = keeping ? app.searchTools() : undefined;

  const middleware = createMiddleware({
    name: name ?? DEFAULT_TOOL_LESSONS_MIDDLEWARE.name,
    // Cache-keeping: the thread's kept tools live in the agent's state, so a checkpointer keeps them.
    ...(keeping ? { stateSchema: KeptStateSchema } : {}),
    tools: search ? [search] : [],
    async wrapModelCall(request, handler) {
      const kept = search ? ((request.state as { keptTools?: KeptTool[] }).keptTools ?? []) : undefined;
      // Provider-deferred (src/serve/provider-mode.ts): every tool is the thread's, so every tool is served as kept.
      const mode = search ? cacheModeOf(request.model, app.options.deferredLoading) : "append";
      let turn: ServedTurn | undefined;
      try {
        const served =
          mode === "append" ? kept : agentTools(request.tools).map((t) => ({ name: t.name, description: "" }));
        turn = await serve(request, served);
      } catch (error) {
        // Anything unforeseen in serving: the call goes on as the agent made it.
        server.reporter.report(
          "unexpected",
          "serving the request failed; the call went on as the agent made it.",
          error,
        );
      }
      if (!turn || turn.status !== "served") {
        if (mode === "append") return handler(request);
        // A deferred thread's history must still reach the provider in its form (OpenAI refuses a
        // tool_search_call answered as a function), so the tools stay deferred and frozen.
        const call = deferredCall(mode, request.tools, request.messages, kept ?? [], []);
        const tools = call.tools as typeof request.tools;
        const reply = withSearchCalls(mode, await handler({ ...request, tools, messages: call.messages }));
        return call.kept === kept ? reply : new Command({ update: { keptTools: [...call.kept] } });
      }
      const systemMessage = withLessonsBlock(request.systemMessage, turn.block.text) ?? request.systemMessage;
      if (!kept) {
        const tools = toolsForModel(request.tools, turn.tools, turn.shownCards, SHOW_EXAMPLES);
        return handler({ ...request, tools: tools as typeof request.tools, systemMessage });
      }
      if (mode !== "append") {
        const call = deferredCall(mode, request.tools, request.messages, kept, turn.shownCards);
        const tools = call.tools as typeof request.tools;
        const reply = withSearchCalls(
          mode,
          await handler({ ...request, tools, messages: call.messages, systemMessage }),
        );
        return call.kept === kept ? reply : new Command({ update: { keptTools: [...call.kept] } });
      }
      const own = agentTools(request.tools);
      const known = new Set(own.map((t) => t.name));
      const grown = keptForCall(
        kept,
        turn.tools ?? [...known],
        describerOf(own, turn.shownCards),
        request.messages,
        known,
      );
      const tools = keptTools(request.tools, grown);
      const reply = await handler({ ...request, tools: tools as typeof request.tools, systemMessage });
      // The grown set goes into the thread's state; the reply goes on as the model gave it.
      return grown === kept ? reply : new Command({ update: { keptTools: [...grown] } });
    },
  });
  // The app it is a view over: its ledger, recorder, manager and setup() reach everything it serves with.
  return Object.assign(middleware, { app });
}

/** The middleware's own state: the thread's kept tools (cache-keeping mode; empty otherwise). */
const KeptStateSchema = z.object({
  keptTools: z.array(z.object({ name: z.string(), description: z.string() })).default([]),
});

/** The agent's own tools in a request (named; not `search_tools`). */
function agentTools(tools: readonly RequestTool[]): ToolSource[] {
  return tools.flatMap((t) => {
    const name = requestToolName(t);
    return name === undefined || name === SEARCH_TOOLS_NAME ? [] : [t as ToolSource];
  });
}

/**
 * The tools of a cache-keeping model call: `search_tools` first, then the kept tools in their kept
 * order, each as first described (a plain definition where that differs from the registered
 * tool's own, see `toolsForModel`), then the tools without a name (a provider's), as they are.
 */
function keptTools(tools: readonly RequestTool[], kept: readonly KeptTool[]): RequestTool[] {
  const byName = new Map<string, RequestTool>();
  const unnamed: RequestTool[] = [];
  for (const tool of tools) {
    const name = requestToolName(tool);
    if (name === undefined) unnamed.push(tool);
    else byName.set(name, tool);
  }
  const out: RequestTool[] = [];
  const search = byName.get(SEARCH_TOOLS_NAME);
  if (search) out.push(search);
  for (const { name, description } of kept) {
    const tool = byName.get(name);
    if (!tool || name === SEARCH_TOOLS_NAME) continue;
    const own = (tool as { description?: unknown }).description;
    out.push(own === description ? tool : { name, description, schema: (tool as { schema?: unknown }).schema });
  }
  return [...out, ...unnamed];
}

/** What the middleware reads of langchain's runtime (`configurable` is there at run time, though not typed). */
interface RuntimeView {
  context?: unknown;
  store?: BaseStore;
  configurable?: Record<string, unknown>;
}

/** The run's config as serving reads it: its callbacks and metadata, `configurable` and v1 `context`. */
function configOf(runtime: RuntimeView): ServeConfig & { configurable: Record<string, unknown> } {
  const config = currentConfig();
  const configurable = {
    ...(runtime.configurable ?? {}),
    ...((config?.configurable ?? {}) as Record<string, unknown>),
  };
  const context = isPlainRecord(runtime.context) ? runtime.context : undefined;
  return {
    ...(config ?? {}),
    metadata: (config?.metadata ?? {}) as Record<string, unknown>,
    configurable,
    ...(context ? { context } : {}),
  };
}

/** The run's config (metadata and callbacks included), when called inside a run. */
function currentConfig(): RunnableConfig | undefined {
  try {
    return getConfig();
  } catch {
    return undefined;
  }
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
