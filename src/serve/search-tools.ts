/**
 * `search_tools`: the tool the model may call in cache-keeping mode (`ServeOptions.cacheKeeping`)
 * to find tools it does not hold yet. A real LangChain tool (`tool()`, a zod schema). It is
 * answered by the package's learned routing (`ToolRouter` over the `ToolIndex` serving uses) in
 * the caller's partition only, the caller resolved as serving resolves it, within `timeoutMs`.
 *
 * Its answer (what the model reads) names each found tool with the package's own one-line summary
 * ({@link toolSummary}: the words of its registered name and its schema's argument names), never
 * the author's or an MCP server's description text, which may carry instructions. The message's
 * artifact describes each found tool as the model is shown it in the tool's own definition
 * (author's description and learned lines): the adapter appends those to the thread's kept set
 * (`keptForCall`), or names them to the provider in provider-deferred mode (`provider-mode.ts`).
 *
 * The query is never echoed: not in the answer, not in a failure, and not through langchain's
 * tool error (which quotes the arguments whole when they fail the schema): the schema accepts any
 * value and the query is clipped to {@link MAX_QUERY_CHARS} before use.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import type { BaseStore } from "@langchain/langgraph";
import { z } from "zod";
import { withinBound } from "../failure.js";
import { oneLine } from "../internal.js";
import type { ToolSource } from "../ledger/cards.js";
import { shownCards } from "../prompt/describe.js";
import { resolveThreadCaller } from "../caller/thread-callers.js";
import { describerOf, SEARCH_TOOLS_NAME, type KeptTool, type SearchToolsArtifact } from "./tool-set.js";
import { DEFAULT_SERVE, type ServeOptions } from "./options.js";
import { TurnServer } from "./turn-server.js";

/** Most characters of a query routing reads; the rest is dropped before use. */
export const MAX_QUERY_CHARS = 500;

/**
 * The arguments of `search_tools`. Nothing fails it: langchain's tool error quotes the arguments
 * of a call that fails its schema (a 5,000-character query would come back whole), so a query of
 * any length or type is taken (`catch`) and clipped or emptied before use.
 */
export const SearchToolsInputSchema = z
  .object({
    query: z
      .string()
      .describe("What you need a tool for, in a few words (e.g. 'refund an order', 'look up a shipment').")
      .catch(""),
  })
  .catch({ query: "" });

/** Most name words and argument names a summary lists. */
const SUMMARY_WORDS = 8;
const SUMMARY_ARGS = 6;
/** An argument name a summary may print: an identifier (a schema's key could be any text). */
const ARG_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,39}$/u;

/** What the model is told about `search_tools` (fixed text: it opens every cached prefix). */
export const SEARCH_TOOLS_DESCRIPTION =
  "Find more of your tools. Only some of your tools are listed; when none of them fits the task, call this " +
  "with what you need a tool for. The tools it names can be called from your next step on.";

/**
 * Make `search_tools` for one adapter (or from serving's options, e.g. `{ ledger, index }` with the
 * index the lessons nodes route with): answered with the server's backends (its ledger, index and
 * router), its `partition` resolver and `timeoutMs`, among the agent's `tools` only (without
 * them, among the tools registered in the caller's partition). A failure or
 * a search past the bound answers "no tools found" and is reported once through the server's sink.
 */
export function createSearchToolsTool(serving: TurnServer | ServeOptions, tools?: readonly ToolSource[]) {
  const server = serving instanceof TurnServer ? serving : new TurnServer(serving);
  const given = tools && new Map(tools.filter((t) => t.name !== SEARCH_TOOLS_NAME).map((t) => [t.name, t]));
  const timeoutMs = server.options.timeoutMs ?? DEFAULT_SERVE.timeoutMs;
  return tool(
    async (input: z.infer<typeof SearchToolsInputSchema>, config?: RunnableConfig) => {
      let found: KeptTool[] = [];
      let lines: string[] = [];
      const query = clipQuery(input.query);
      try {
        if (query !== "")
          ({ found, lines } = await withinBound(() => search(query, config), timeoutMs, {
            stage: "serve",
            kind: "search_tools",
          }));
      } catch (error) {
        server.reporter.report(
          "search_tools",
          "search_tools failed or ran past the time bound; it answered that no tool was found.",
          error,
        );
      }
      const artifact: SearchToolsArtifact = { found };
      const content =
        lines.length === 0
          ? "No other tool was found for that. Go on with the tools you have."
          : ["Found these tools; you can call them from your next step:", ...lines].join("\n");
      return [content, artifact] as [string, SearchToolsArtifact];
    },
    {
      name: SEARCH_TOOLS_NAME,
      description: SEARCH_TOOLS_DESCRIPTION,
      schema: SearchToolsInputSchema,
      responseFormat: "content_and_artifact",
    },
  );

  async function search(query: string, config: RunnableConfig | undefined) {
    const store = (config as { store?: BaseStore } | undefined)?.store;
    const ledger = server.backends.ledger(store);
    const router = server.backends.router(ledger);
    if (!router) return { found: [], lines: [] };
    const configurable = (config?.configurable ?? {}) as Record<string, unknown>;
    const threadId = typeof configurable.thread_id === "string" ? configurable.thread_id : undefined;
    const partition = resolveThreadCaller(
      config as Parameters<typeof resolveThreadCaller>[0],
      server.options.partition,
      threadId,
      ledger?.callers,
    );
    const maxTools = server.options.searchResults ?? DEFAULT_SERVE.searchResults;
    const routed = await router.route(query, { partition, maxTools });
    // Only the caller's own partition answers: a route over the fallback partition's tools finds nothing.
    if (routed.skipped || routed.routedFrom !== undefined) return { found: [], lines: [] };
    const offered = routed.offered.map((o) => o.tool).filter((name) => name !== SEARCH_TOOLS_NAME);
    const [cards, settings] = ledger
      ? await Promise.all([ledger.getCards(partition, offered), ledger.getSettings(partition)])
      : [[], undefined];
    // The agent's own tools when given (their current descriptions); else the partition's registered cards.
    const known =
      given ?? new Map(cards.map((c) => [c.name, { name: c.name, description: c.author.description } as ToolSource]));
    const names = offered.filter((name) => known.has(name));
    const describe = describerOf([...known.values()], shownCards(cards, settings));
    const argNames = new Map(cards.map((c) => [c.name, c.author.argNames]));
    return {
      found: names.map((name) => ({ name, description: describe(name) })),
      lines: names.map((name) => `- ${name}: ${toolSummary(name, argNames.get(name) ?? [])}`),
    };
  }
}

/** The query as routing reads it: a string, one line, at most {@link MAX_QUERY_CHARS} characters. */
export function clipQuery(query: unknown): string {
  return typeof query === "string" ? oneLine(query.slice(0, MAX_QUERY_CHARS * 2)).slice(0, MAX_QUERY_CHARS) : "";
}

/**
 * The package's own one-line summary of a tool, built from what the app registered and never from
 * the author's or a server's description text: the words of the tool's name, then the argument
 * names of its schema that are plain identifiers (e.g. `get order status; takes order_id`). Pure.
 */
export function toolSummary(name: string, argNames: readonly string[]): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/gu, "$1 $2")
    .split(/[^A-Za-z0-9]+/u)
    .filter((w) => w !== "")
    .map((w) => w.toLowerCase());
  const named = words.slice(0, SUMMARY_WORDS).join(" ") + (words.length > SUMMARY_WORDS ? " …" : "");
  const args = argNames.filter((a) => ARG_NAME.test(a));
  const takes =
    args.length === 0
      ? "takes no named arguments"
      : `takes ${args.slice(0, SUMMARY_ARGS).join(", ")}${args.length > SUMMARY_ARGS ? ", …" : ""}`;
  return `${named || "tool"}; ${takes}`;
}
