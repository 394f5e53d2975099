/**
 * The `createAgent` middleware (langchain v1): on every model call of an agent built with
 * `createAgent({ model, tools, middleware: [toolLessonsMiddleware({ ledger })] })`, the tools
 * routed for the caller's request, each described as its card says, and the pinned rules block
 * in the system message. Once per request it also captures the user's edicts, records what
 * routing offered, and tells the recorder which partition the thread is in.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { SystemMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseStore } from "@langchain/langgraph";
import { getConfig } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { ToolIndex } from "../routing/tool-index.js";
import { type RoutedTools, type RoutingSkipped, type RoutingWarning, ToolRouter } from "../routing/router.js";
import { registerTools } from "../learn/register.js";
import type { ToolSource } from "../ledger/cards.js";
import type { Ledger } from "../ledger/ledger.js";
import { ledgerOn } from "../ledger/on-store.js";
import type { ToolCard } from "../ledger/schema.js";
import { renderMemoryBlock } from "../prompt/memory.js";
import { renderRulesBlock } from "../prompt/rules-block.js";
import { threadCallersOf } from "../record/callers.js";
import { type PartitionResolver, partitionOf } from "../record/partition.js";
import { latestHumanTurn, requestIdFor, toolsInUse } from "../record/request.js";
import { recordEdicts } from "../rules/store.js";
import { bindingRules } from "../rules/store.js";
import { DEFAULT_SETTINGS, type Settings } from "../settings.js";
import { redactForLog } from "../text/gate.js";
import { type RequestTool, requestToolName, toolsForModel } from "./tools-view.js";

/** Options of {@link toolLessonsMiddleware}. */
export interface ToolLessonsMiddlewareOptions {
  /**
   * The ledger: cards, rules and route records. Without one, a ledger over the graph's store
   * (`createAgent({ store })`, the runtime's `store`) is used; with neither, the middleware passes
   * every call through unchanged and says so once.
   * @default a Ledger over the agent's store
   */
  ledger?: Ledger;
  /**
   * The router. Its `k` and `alwaysOffer` are overridden per call by `maxTools` and
   * `alwaysInclude` when those are set.
   * @default new ToolRouter({ index: new ToolIndex({ ledger }) }) (in-memory index, lexical embeddings)
   */
  router?: ToolRouter;
  /**
   * Most tools routing offers per request (as langchain's `llmToolSelectorMiddleware`); the
   * always-included tools and the tools the thread already uses come on top.
   * @default the router's k (DEFAULT_SETTINGS.routingK, 5)
   */
  maxTools?: number;
  /**
   * Tools offered on every request, routed or not; they do not count against `maxTools`.
   * @default []
   */
  alwaysInclude?: readonly string[];
  /**
   * Names the caller's partition. By default `tenant_id`, `user_id` and `agent_id` are read from
   * the run's `metadata`, then `configurable`, then v1 `context` (`partitionOf`).
   * @default partitionOf(config)
   */
  partition?: PartitionResolver;
  /**
   * Register the agent's tools (one card each, `registerTools`) in a caller's partition the first
   * time this process sees it, so routing has the tools to choose from. Unchanged tools write
   * nothing.
   * @default true
   */
  register?: boolean;
  /**
   * Capture the user's edicts ("never email Sarah") from each new request and store them as
   * critical rules of the caller's partition before the model is called, so they bind at once.
   * Turn it off where the lessons graph's classify node already captures them.
   * @default true
   */
  captureEdicts?: boolean;
  /**
   * Pin the `## Tool-scoped rules` block (critical and high rules of the offered tools) to the
   * system message.
   * @default true
   */
  pinRules?: boolean;
  /**
   * Append the tool-memory guidelines of the tools sent (what each is for, what works, common
   * issues, best practices, with their statistics; `manager.summarize()` writes them) after the
   * rules block.
   * @default true
   */
  guidelines?: boolean;
  /**
   * Most rules the pinned block lists (critical rules are listed past it).
   * @default 30
   */
  maxRules?: number;
  /**
   * The settings that change what the model is shown (`showLearnedExamples`).
   * @default DEFAULT_SETTINGS
   */
  settings?: Pick<Settings, "showLearnedExamples">;
  /**
   * Where a degraded step is reported: routing failed (every tool is sent), the ledger failed (the
   * authors' descriptions, no rules block), a caller's ids were refused. Once per kind of failure
   * and middleware; the text is redacted. Never thrown into the agent's run.
   * @default console.warn with a "[tool-lessons]" prefix
   */
  onWarning?: (message: string) => void;
  /**
   * The middleware's name in the agent (and in langchain's errors).
   * @default "ToolLessonsMiddleware"
   */
  name?: string;
}

/** The defaults of {@link ToolLessonsMiddlewareOptions} (`ledger`, `router`, `maxTools`, `partition` have none of their own). */
export const DEFAULT_TOOL_LESSONS_MIDDLEWARE: Readonly<
  Required<Omit<ToolLessonsMiddlewareOptions, "ledger" | "router" | "maxTools" | "partition">>
> = Object.freeze({
  alwaysInclude: Object.freeze([]),
  register: true,
  captureEdicts: true,
  pinRules: true,
  guidelines: true,
  maxRules: 30,
  settings: DEFAULT_SETTINGS,
  onWarning: (message: string) => console.warn(`[tool-lessons] ${message}`),
  name: "ToolLessonsMiddleware",
});

/** Requests whose preparation is kept (every model call of a request reuses it); the oldest is dropped past it. */
const KEPT_REQUESTS = 1000;
/** Partitions whose registration is remembered per ledger; the oldest is forgotten past it. */
const KEPT_PARTITIONS = 10_000;

/** What one request's model calls are given, decided once per request. */
export interface PreparedRequest {
  /** The caller's partition. */
  partition: string;
  /** The routed tools (offered, always, sticky); `undefined` when routing was skipped: every tool is sent. */
  routed: string[] | undefined;
  /** The cards of the tools sent, in the caller's partition (none when the ledger failed). */
  cards: ToolCard[];
  /** The pinned rules block (`""` when none is pinned or the ledger failed). */
  rulesBlock: string;
  /** The guidelines of the tools sent (`""` when none has one, or the ledger failed). */
  memoryBlock: string;
}

/** The kinds of degraded step {@link ToolLessonsMiddlewareOptions.onWarning} hears of, once each. */
export type MiddlewareWarning =
  "no_ledger" | "partition" | "register" | "routing" | "route_record" | "ledger_read" | "edicts";

const WARNING_TEXT: Readonly<Record<MiddlewareWarning, string>> = Object.freeze({
  no_ledger:
    "toolLessonsMiddleware has no ledger: pass { ledger } or give createAgent a store. Every tool is sent as registered.",
  partition: "a caller's partition ids were refused: that request got every tool and nothing was recorded for it.",
  register: "registering the agent's tools in a partition failed; routing uses the cards already there.",
  routing: "routing failed: the request got every tool (routing was skipped).",
  route_record: "recording what routing offered failed; the turn went on.",
  ledger_read: "reading cards or rules failed: the tools went out with their authors' descriptions.",
  edicts: "capturing the user's edicts failed; the turn went on.",
});

/**
 * The middleware for langchain v1's `createAgent`, shaped like langchain's own
 * `llmToolSelectorMiddleware({ maxTools, alwaysInclude })`: on each model call it narrows the
 * agent's tools to those routed for the caller's request (top `maxTools`, plus `alwaysInclude`,
 * plus tools the thread already uses), sends each with what its card says the model is shown
 * (the author's description, then "Learned from use:" lines), and pins the caller's critical and
 * high rules to the system message. Once per request: the user's edicts are captured, what
 * routing offered is recorded (route records join the recorder's turn on its request id), and
 * the ledger's `ThreadCallers` tell the recorder (whose callbacks see no `context`)
 * where the thread's calls go.
 *
 * Degrades, never breaks: when routing, the ledger or a caller's ids fail, the model call goes
 * on with every tool (or the authors' descriptions), reported once through `onWarning`.
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
  const o = { ...DEFAULT_TOOL_LESSONS_MIDDLEWARE, ...definedOf(options) };
  const warned = new Set<MiddlewareWarning>();
  const warn = (kind: MiddlewareWarning, error?: unknown): void => {
    if (warned.has(kind)) return;
    warned.add(kind);
    o.onWarning(error === undefined ? WARNING_TEXT[kind] : `${WARNING_TEXT[kind]} (${redactForLog(error)})`);
  };
  const prepared = new Map<string, Promise<PreparedRequest | undefined>>();
  const registered = new Map<Ledger, Map<string, string>>();
  const routers = new WeakMap<BaseStore, { ledger: Ledger; router: ToolRouter }>();

  /** The ledger and router of a run: the options', or ones over the agent's store. */
  function backendsOf(store: BaseStore | undefined): { ledger: Ledger; router: ToolRouter } | undefined {
    if (options.ledger) {
      return { ledger: options.ledger, router: options.router ?? defaultRouter(options.ledger) };
    }
    if (!store) return undefined;
    const ledger = ledgerOn(store);
    let found = routers.get(ledger.store);
    if (!found) {
      found = { ledger, router: options.router ?? newRouter(ledger) };
      routers.set(ledger.store, found);
    }
    return found;
  }
  let ownRouter: ToolRouter | undefined;
  function defaultRouter(ledger: Ledger): ToolRouter {
    ownRouter ??= newRouter(ledger);
    return ownRouter;
  }
  /** A router of the middleware's own: a skipped turn is reported by the middleware, other warnings pass on. */
  function newRouter(ledger: Ledger): ToolRouter {
    const onWarning = (message: string, warning: RoutingWarning): void => {
      if (warning.kind !== "skipped") o.onWarning(message);
    };
    return new ToolRouter({ index: new ToolIndex({ ledger }), onWarning });
  }

  /** Register the agent's tools in the partition once per process (again if the tool set changes). */
  async function ensureRegistered(ledger: Ledger, router: ToolRouter, partition: string, tools: ToolSource[]) {
    if (!o.register || tools.length === 0) return;
    const seen = registered.get(ledger) ?? new Map<string, string>();
    registered.set(ledger, seen);
    const signature = tools
      .map((t) => t.name)
      .sort()
      .join("\u0000");
    if (seen.get(partition) === signature) return;
    let changed: string[];
    try {
      const result = await registerTools(ledger, tools, { partition });
      changed = [...result.registered, ...result.updated];
      seen.delete(partition);
      seen.set(partition, signature);
      // Forgetting a partition only costs a re-registration that writes nothing.
      if (seen.size > KEPT_PARTITIONS) seen.delete(seen.keys().next().value as string);
    } catch (error) {
      warn("register", error);
      return;
    }
    if (changed.length === 0) return;
    try {
      // A partition the index has loaded is brought up to date; one it has not is read whole on its first route.
      await router.index.upsertCards(partition, await ledger.getCards(partition, changed));
    } catch (error) {
      warn("routing", error);
    }
  }

  async function prepare(
    messages: readonly BaseMessage[],
    tools: readonly RequestTool[],
    runtime: { context?: unknown; store?: BaseStore; configurable?: Record<string, unknown> },
  ): Promise<PreparedRequest | undefined> {
    const backends = backendsOf(runtime.store);
    if (!backends) {
      warn("no_ledger");
      return undefined;
    }
    const config = currentConfig();
    const configurable = {
      ...(runtime.configurable ?? {}),
      ...((config?.configurable ?? {}) as Record<string, unknown>),
    };
    const context = isPlainRecord(runtime.context) ? runtime.context : undefined;
    const metadata = (config?.metadata ?? {}) as Record<string, unknown>;
    const threadId = typeof configurable.thread_id === "string" ? configurable.thread_id : undefined;
    let partition: string;
    try {
      partition = partitionOf({ metadata, configurable, ...(context ? { context } : {}) }, o.partition);
    } catch (error) {
      threadCallersOf(backends.ledger).refuse(threadId);
      warn("partition", error);
      return undefined;
    }
    threadCallersOf(backends.ledger).remember(threadId, partition);
    const requestId = requestIdFor(threadId, messages);
    if (requestId === undefined) return undefined;
    const key = `${partition}\u0000${threadId ?? ""}\u0000${requestId}`;
    let pending = prepared.get(key);
    if (!pending) {
      pending = prepareRequest(backends, partition, threadId, requestId, messages, tools);
      prepared.set(key, pending);
      if (prepared.size > KEPT_REQUESTS) prepared.delete(prepared.keys().next().value as string);
    }
    return pending;
  }

  async function prepareRequest(
    { ledger, router }: { ledger: Ledger; router: ToolRouter },
    partition: string,
    threadId: string | undefined,
    requestId: string,
    messages: readonly BaseMessage[],
    tools: readonly RequestTool[],
  ): Promise<PreparedRequest> {
    const turn = latestHumanTurn(messages);
    const agentTools = tools.flatMap((t) => (requestToolName(t) === undefined ? [] : [t as ToolSource]));
    const names = agentTools.map((t) => t.name);
    await ensureRegistered(ledger, router, partition, agentTools);

    if (o.captureEdicts && turn && turn.text.trim() !== "") {
      try {
        await recordEdicts(ledger, { partition, text: turn.text, tools: names });
      } catch (error) {
        warn("edicts", error);
      }
    }

    let routed: RoutedTools | undefined;
    let skipped: RoutingSkipped["reason"] | undefined;
    try {
      routed = await routeTurn(router, partition, turn?.text ?? "", names, messages, o);
    } catch (error) {
      warn("routing", error);
      skipped = "index_failed";
    }
    if (routed?.skipped) {
      // The router caught its own failure (or found no tools): every tool goes out, as when it throws.
      warn("routing", `${routed.skipped.reason}${routed.skipped.errorName ? `, ${routed.skipped.errorName}` : ""}`);
      skipped = routed.skipped.reason;
      routed = undefined;
    }
    const recordRoute = async (): Promise<void> => {
      try {
        await ledger.appendRoutes([
          {
            partition,
            threadId,
            requestId,
            // Routing skipped: every tool was sent, no choice was made (such turns count for nothing).
            offered: routed?.offered ?? [],
            allSent: routed?.allSent ?? true,
            ...(skipped ? { skipped } : {}),
            k: options.maxTools ?? router.k,
          },
        ]);
      } catch (error) {
        warn("route_record", error);
      }
    };
    const sent = routed ? routed.tools.filter((t) => names.includes(t)) : names;
    const readLessons = async (): Promise<Pick<PreparedRequest, "cards" | "rulesBlock" | "memoryBlock">> => {
      try {
        const [cards, rules, states] = await Promise.all([
          ledger.getCards(partition, sent),
          o.pinRules ? bindingRules(ledger, partition, sent) : [],
          o.guidelines ? Promise.all(sent.map((tool) => ledger.getToolMemory(partition, tool))) : [],
        ]);
        return {
          cards,
          rulesBlock: o.pinRules ? renderRulesBlock(rules, { tools: sent, maxRules: o.maxRules }).text : "",
          memoryBlock: renderMemoryBlock(
            o.guidelines ? sent.map((tool, i) => ({ tool, guideline: states[i]?.guideline ?? null })) : [],
          ),
        };
      } catch (error) {
        warn("ledger_read", error);
        return { cards: [], rulesBlock: "", memoryBlock: "" };
      }
    };
    // The route record and the reads are independent: one round trip of the store's latency, not two.
    const [, lessons] = await Promise.all([recordRoute(), readLessons()]);
    return { partition, routed: routed ? sent : undefined, ...lessons };
  }

  return createMiddleware({
    name: o.name,
    async wrapModelCall(request, handler) {
      let ready: PreparedRequest | undefined;
      try {
        ready = await prepare(request.messages, request.tools, request.runtime as RuntimeView);
      } catch (error) {
        // Anything unforeseen in preparing: the call goes on as the agent made it.
        warn("routing", error);
      }
      if (!ready) return handler(request);
      const tools = toolsForModel(request.tools, ready.routed, ready.cards, o.settings);
      const added = [ready.rulesBlock.trimEnd(), ready.memoryBlock].filter((b) => b !== "").join("\n\n");
      const systemMessage =
        added === ""
          ? request.systemMessage
          : request.systemMessage.text === ""
            ? new SystemMessage(added)
            : request.systemMessage.concat(`\n\n${added}`);
      return handler({ ...request, tools: tools as typeof request.tools, systemMessage });
    },
  });
}

/** What the middleware reads of langchain's runtime (`configurable` is there at run time, though not typed). */
interface RuntimeView {
  context?: unknown;
  store?: BaseStore;
  configurable?: Record<string, unknown>;
}

/** Route a request among the agent's tools; the thread's tools in use are kept. */
async function routeTurn(
  router: ToolRouter,
  partition: string,
  text: string,
  names: readonly string[],
  messages: readonly BaseMessage[],
  o: { alwaysInclude: readonly string[] } & Pick<ToolLessonsMiddlewareOptions, "maxTools">,
): Promise<RoutedTools> {
  const routed = await router.route(text, {
    partition,
    sticky: toolsInUse(messages),
    ...(o.maxTools !== undefined ? { k: o.maxTools } : {}),
  });
  const always = o.alwaysInclude.filter((t) => names.includes(t) && !routed.tools.includes(t));
  return { ...routed, always: [...routed.always, ...always], tools: [...routed.tools, ...always] };
}

/** The run's config (metadata included), when called inside a run. */
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

function definedOf<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
