/**
 * `search_tools`: the tool the model may call in cache-keeping mode (`ServeOptions.cacheKeeping`)
 * to find tools the thread does not hold yet. A real LangChain tool (`tool()`, a zod schema). It
 * is answered by the package's learned routing (`ToolRouter` over the `ToolIndex` serving uses)
 * in the caller's partition only, the caller resolved as serving resolves it, within `timeoutMs`.
 *
 * Its answer is the found tools' names with a one-line description each (what the model reads),
 * and, as the message's artifact, each found tool described as the model is shown it (author's
 * description and learned lines): the adapter appends those to the thread's kept set for the next
 * model call (`keptForCall`). The query is never echoed: not in the answer, not in a failure.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import type { BaseStore } from "@langchain/langgraph";
import { z } from "zod";
import { withinBound } from "../failure.js";
import { oneLine } from "../internal.js";
import type { ToolSource } from "../ledger/cards.js";
import { shownCards } from "../prompt/describe.js";
import { resolveThreadCaller, threadCallersOf } from "../caller/thread-callers.js";
import { describerOf, SEARCH_TOOLS_NAME, type KeptTool, type SearchToolsArtifact } from "./tool-set.js";
import { DEFAULT_SERVE, type ServeOptions } from "./options.js";
import { TurnServer } from "./turn-server.js";

/** The arguments of `search_tools`. */
export const SearchToolsInputSchema = z.object({
  query: z
    .string()
    .min(1)
    .max(1000)
    .describe("What you need a tool for, in a few words (e.g. 'refund an order', 'look up a shipment')."),
});

/** Longest one-line description in an answer, in characters. */
const LINE_CHARS = 160;

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
      try {
        ({ found, lines } = await withinBound(() => search(input.query, config), timeoutMs, {
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
      ledger && threadCallersOf(ledger),
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
    return {
      found: names.map((name) => ({ name, description: describe(name) })),
      lines: names.map((name) => `- ${name}: ${firstLine(known.get(name)?.description ?? "")}`),
    };
  }
}

/** The author's description cut to one line of at most {@link LINE_CHARS} characters. */
function firstLine(description: string): string {
  const line = oneLine(description.split(/\n\s*\n|(?<=\.)\s/u)[0] ?? "");
  return line.length <= LINE_CHARS ? line : `${line.slice(0, LINE_CHARS - 1)}…`;
}
