/**
 * Who picks, for the selection-accuracy harness: the router alone ({@link routerSelector}: the
 * package's own routing, offline, deterministic) or a real chat model with the tools bound
 * ({@link chatModelSelector}: the first tool call of its reply). Either can be restricted to a
 * case's own candidate tools: the router leaves the other tools out of its ranking (one index for
 * every case, nothing rebuilt), the chat model is bound to the candidates only.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { isLangChainTool, type StructuredToolInterface } from "@langchain/core/tools";
import { InMemoryStore } from "@langchain/langgraph";
import { InvalidInput } from "../errors.js";
import { ToolIndex, type ToolIndexOptions } from "../routing/tool-index.js";
import { definedOnly } from "../internal.js";
import { registerTools } from "../learn/register.js";
import type { ToolSource } from "../ledger/cards.js";
import { Ledger } from "../ledger/ledger.js";
import type { ToolCard } from "../ledger/schema.js";
import { describedAs, modelDescription } from "../prompt/describe.js";
import type { ToolLine } from "./cases.js";
import type { SelectionMode } from "./diagnose.js";
import { duplicateTools } from "./duplicates.js";

export type { SelectionMode } from "./diagnose.js";

/** A tool the harness can score: a JSONL tool line, or any LangChain tool (`tool()`, `StructuredTool`, MCP tools). */
export type EvalTool = ToolLine | StructuredToolInterface;

/** One turn to pick for. */
export interface SelectionRequest {
  /** The user's words. */
  turn: string;
  /**
   * The only tools that may be picked or ranked (the case's own candidate list); every tool of
   * the selector when absent.
   */
  candidates?: readonly string[];
  /**
   * How many tools a selector that ranks should return, best first (for recall@k).
   * @default 1
   */
  depth?: number;
}

/** What a selector answered for one turn. */
export interface Selection {
  /** The first tool this turn calls, or `null` when it calls none. */
  tool: string | null;
  /** The tools it ranked, best first, up to the request's `depth`; absent for a selector that only picks (a chat model). */
  ranked?: string[];
  /**
   * Its best score for the turn whatever its threshold (the router's: -1 when it offers nothing),
   * for the "no tool" AUROC; absent for a selector without scores (a chat model).
   */
  score?: number;
  /** Its second-best score (the router's), for the score gap the fitted "no tool" model reads. */
  second?: number;
}

/** Picks the first tool for a user turn, or `null` for none. */
export interface Selector {
  readonly mode: SelectionMode;
  /** What picked, for reports: "router (lexical embeddings)", "chat model gpt-4o-mini". */
  readonly label: string;
  /** The names of the tools it chooses among. */
  readonly tools: readonly string[];
  /** The router's minScore, when it has one. */
  readonly minScore?: number;
  /** Things the caller should know about the setup (e.g. a temperature that is not 0). */
  readonly warnings: readonly string[];
  /**
   * Whether the same turn always gets the same answer (the router): then one run of each case
   * is the default, since repeats cannot disagree.
   * @default false
   */
  readonly deterministic?: boolean;
  /**
   * Groups of its tools whose descriptions and argument schemas are the same once normalized
   * (see {@link duplicateTools}): diagnosed as duplicates, never as a pair to fence.
   * @default [] (none)
   */
  readonly duplicates?: readonly (readonly string[])[];
  /** Pick for one turn (among its candidates, when given). Throws on failure. */
  select(request: SelectionRequest, config?: RunnableConfig): Promise<Selection>;
}

/** A tool as a {@link ToolSource} (name, description, argument schema). */
export function toolSource(tool: EvalTool): ToolSource {
  if (isLangChainTool(tool)) return { name: tool.name, description: tool.description ?? "", schema: tool.schema };
  const line = tool as ToolLine;
  return { name: line.name, description: line.description ?? "", schema: line.parameters ?? undefined };
}

/** Names of the tools, refusing a repeated or blank one. */
function toolNames(tools: readonly EvalTool[]): string[] {
  if (tools.length === 0) throw new InvalidInput("The harness needs at least one tool.");
  const seen = new Set<string>();
  for (const t of tools) {
    if (typeof t.name !== "string" || t.name.trim() === "")
      throw new InvalidInput("Every tool needs a non-empty name.");
    if (seen.has(t.name)) throw new InvalidInput(`Two tools are named "${t.name}"; tool names must be unique.`);
    seen.add(t.name);
  }
  return [...seen];
}

// ------------------------------------------------------------------ router mode

/** Options of {@link routerSelector}. */
export interface RouterSelectorOptions {
  tools: readonly EvalTool[];
  /**
   * Cards whose learned parts (example requests) routing should use, matched by tool name: the
   * "after" of a before/after comparison. The author's text always comes from `tools`.
   * @default [] (the tools as written)
   */
  lessons?: readonly ToolCard[];
  /**
   * Pick no tool when the best scores below this (cosine similarity): the router's "no tool" path.
   * @default undefined (always pick the best tool)
   */
  minScore?: number;
  /**
   * Options of the routing index, as the application passes them to {@link ToolIndex}.
   * @default {} (offline lexical embeddings, the index's defaults)
   */
  index?: Omit<ToolIndexOptions, "ledger">;
}

/** The defaults of {@link RouterSelectorOptions} (`minScore` has none: without it the router always picks a tool). */
export const DEFAULT_ROUTER_SELECTOR_OPTIONS: Readonly<Required<Pick<RouterSelectorOptions, "lessons" | "index">>> =
  Object.freeze({
    lessons: Object.freeze([]) as readonly ToolCard[],
    index: Object.freeze({}),
  });

const ROUTER_PARTITION = "evaluate";

/**
 * The router alone as a selector: the tools registered in a throw-away in-memory ledger (with
 * the learned parts of `lessons`), indexed once by {@link ToolIndex}; a turn picks the top-ranked
 * tool, or none when it scores below `minScore`. A case with candidates is ranked among them only
 * (the index leaves the other tools out), with the index as fitted on every tool.
 */
export async function routerSelector(options: RouterSelectorOptions): Promise<Selector> {
  const names = toolNames(options.tools);
  if (options.minScore !== undefined && !Number.isFinite(options.minScore)) {
    throw new InvalidInput(`minScore must be a finite number; got ${options.minScore}.`);
  }
  const o = { ...DEFAULT_ROUTER_SELECTOR_OPTIONS, ...definedOnly(options) };
  const ledger = new Ledger(new InMemoryStore());
  await registerTools(ledger, options.tools.map(toolSource), { partition: ROUTER_PARTITION });
  const lessons = new Map(o.lessons.map((c) => [c.name, c]));
  let learned = 0;
  for (const card of await ledger.listCards(ROUTER_PARTITION)) {
    const lesson = lessons.get(card.name);
    if (!lesson) continue;
    learned += 1;
    await ledger.putCard(
      { ...card, augmented: lesson.augmented, learned: lesson.learned },
      { expectVersion: card.version },
    );
  }
  const index = new ToolIndex({ ...o.index, ledger });
  await index.reindex(ROUTER_PARTITION);
  const minScore = options.minScore;
  const embeddings = o.index.embeddings ? "the given embeddings" : "lexical embeddings";
  return {
    mode: "router",
    label: `router (${embeddings}${minScore !== undefined ? `, minScore ${minScore}` : ""}${learned > 0 ? `, lessons of ${learned} tools` : ""})`,
    tools: names,
    ...(minScore !== undefined ? { minScore } : {}),
    warnings: [],
    deterministic: true,
    duplicates: duplicateTools(options.tools.map(toolSource)),
    async select({ turn, candidates, depth }) {
      // A case's candidates: the other tools are left out of the one index's ranking.
      const among = candidates ? new Set(candidates) : undefined;
      const exclude = among ? new Set(names.filter((n) => !among.has(n))) : undefined;
      const offers = await index.route(ROUTER_PARTITION, turn, {
        k: Math.max(1, depth ?? 1),
        ...(exclude ? { exclude } : {}),
      });
      const best = offers[0];
      const tool = best !== undefined && (minScore === undefined || best.score >= minScore) ? best.tool : null;
      return {
        tool,
        ranked: offers.map((offer) => offer.tool),
        score: best?.score ?? -1,
        second: offers[1]?.score ?? best?.score ?? -1,
      };
    },
  };
}

// ------------------------------------------------------------------ chat-model mode

/** Options of {@link chatModelSelector}. */
export interface ChatModelSelectorOptions {
  /** Any LangChain chat model that supports tool calling, built with temperature 0. */
  model: BaseChatModel;
  tools: readonly EvalTool[];
  /**
   * Cards whose learned lines the model should be shown (usage notes, "Not for" lines, example
   * call), matched by name, as `withDescriptions` shows them in an application.
   * @default [] (the tools as written)
   */
  lessons?: readonly ToolCard[];
  /**
   * The application's system prompt, sent before each turn.
   * @default "" (no system message)
   */
  system?: string;
}

/** Defaults of {@link ChatModelSelectorOptions}. */
export const DEFAULT_CHAT_MODEL_SELECTOR_OPTIONS: Readonly<
  Required<Pick<ChatModelSelectorOptions, "lessons" | "system">>
> = Object.freeze({
  lessons: Object.freeze([]) as readonly ToolCard[],
  system: "",
});

/** The tool in a form `bindTools` takes, described as the model would be shown it with `card`'s lessons. */
function bindable(tool: EvalTool, card: ToolCard | undefined): StructuredToolInterface | Record<string, unknown> {
  const source = toolSource(tool);
  const description = card
    ? modelDescription({ ...card, author: { ...card.author, description: source.description ?? "" } })
    : (source.description ?? "");
  if (isLangChainTool(tool)) {
    return description === (tool.description ?? "") ? tool : describedAs(tool, description);
  }
  const line = tool as ToolLine;
  return {
    type: "function",
    function: { name: line.name, description, parameters: line.parameters ?? { type: "object", properties: {} } },
  };
}

/**
 * A chat model with the tools bound as a selector: each turn is sent alone (after the system
 * prompt, when given), and the name of the reply's first tool call is the pick (`null`: it
 * answered without one). A case with candidates is sent with only those tools bound. The tools
 * are never run.
 * @throws InvalidInput when the model cannot bind tools.
 */
export function chatModelSelector(options: ChatModelSelectorOptions): Selector {
  const names = toolNames(options.tools);
  const o = { ...DEFAULT_CHAT_MODEL_SELECTOR_OPTIONS, ...definedOnly(options) };
  const model = options.model;
  if (typeof model.bindTools !== "function") {
    throw new InvalidInput(
      `The chat model ${model.getName()} cannot bind tools (no bindTools); use a model that supports tool calling.`,
    );
  }
  const lessons = new Map(o.lessons.map((c) => [c.name, c]));
  const bindableTools = options.tools.map((t) => bindable(t, lessons.get(t.name)));
  const all = model.bindTools(bindableTools);
  // One binding per candidate list (cases often share one).
  const bindings = new Map<string, typeof all>();
  const boundFor = (candidates: readonly string[] | undefined): typeof all => {
    if (candidates === undefined) return all;
    const key = [...candidates].sort().join("\u0000");
    let bound = bindings.get(key);
    if (!bound) {
      const among = new Set(candidates);
      bound = model.bindTools!(bindableTools.filter((_, i) => among.has(options.tools[i].name)));
      bindings.set(key, bound);
    }
    return bound;
  };
  const warnings: string[] = [];
  const temperature = (model as unknown as { temperature?: unknown }).temperature;
  if (typeof temperature === "number" && temperature !== 0) {
    warnings.push(
      `the chat model's temperature is ${temperature}; the harness measures at temperature 0: build the model with temperature: 0.`,
    );
  }
  const system = o.system.trim();
  return {
    mode: "chat-model",
    label: `chat model ${modelName(model)}`,
    tools: names,
    warnings,
    deterministic: false,
    duplicates: duplicateTools(options.tools.map(toolSource)),
    async select({ turn, candidates }, config) {
      const messages: BaseMessage[] = [...(system ? [new SystemMessage(system)] : []), new HumanMessage(turn)];
      const reply = await boundFor(candidates).invoke(messages, config);
      const first = reply.tool_calls?.[0]?.name;
      return { tool: typeof first === "string" && first !== "" ? first : null };
    },
  };
}

function modelName(model: BaseChatModel): string {
  const named =
    (model as unknown as { model?: unknown; modelName?: unknown }).model ??
    (model as unknown as { modelName?: unknown }).modelName;
  return typeof named === "string" && named !== "" ? named : model.getName();
}
