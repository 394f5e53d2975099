/**
 * The recall tool: a real LangChain tool (made with `tool()`) the agent calls to read a tool's
 * rules that the prompt block does not carry (normal ones, and high ones the block's cap left
 * out). It reads the caller's partition from the run's config, returns the rules as text, and
 * writes nothing.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { oneLine } from "../internal.js";
import type { Ledger } from "../ledger/ledger.js";
import { partitionOf, type PartitionSpec, toResolver } from "../caller/partition.js";
import { tokenSet } from "../text/tokenize.js";
import { isPinned, RECALL_TOOL_NAME, type RuleView } from "./model.js";
import type { LessonRetriever } from "./retriever.js";
import { listRules } from "./store.js";

/** Options of {@link createRecallRulesTool}. */
export interface RecallRulesToolOptions {
  /** The ledger the rules are read from. */
  ledger: Ledger;
  /**
   * Ranks normal rules by relevance to the `query` argument.
   * @default none: rules that share a word with the query come first
   */
  retriever?: LessonRetriever;
  /**
   * Names the caller's partition: a resolver, or a namespace template such as
   * `"t:{tenant_id}/u:{user_id}"`. Unset, the ids are read from the run's `metadata`,
   * `configurable` and v1 `context` (see `docs/partitions.md`).
   * @default partitionOf(config)
   */
  partition?: PartitionSpec;
  /**
   * Most rules one call returns.
   * @default 12
   */
  maxRules?: number;
  /**
   * The tool's name, as the agent sees it (the prompt block refers to the default).
   * @default RECALL_TOOL_NAME ("recall_tool_rules")
   */
  name?: string;
}

/** The defaults of {@link RecallRulesToolOptions} (`retriever` and `partition` have none of their own). */
export const DEFAULT_RECALL_RULES_TOOL: Readonly<Required<Pick<RecallRulesToolOptions, "maxRules" | "name">>> =
  Object.freeze({ maxRules: 12, name: RECALL_TOOL_NAME });

/** The recall tool's arguments. */
export const RecallRulesInputSchema = z.object({
  tool: z.string().min(1).describe("The name of the tool whose rules to recall."),
  query: z.string().optional().describe("What you are about to do with it; the most relevant rules come first."),
});

/**
 * Make the recall tool: `recall_tool_rules({ tool, query? })` returns the rules that bind the
 * caller for that tool (their partition's and the shared scope's), pinned ones first, then normal
 * ones (those most relevant to `query` first), as text. It records nothing.
 *
 * @example
 * const recall = createRecallRulesTool({ ledger });
 * const agent = createReactAgent({ llm, tools: [...tools, recall] });
 */
export function createRecallRulesTool(options: RecallRulesToolOptions) {
  const maxRules = options.maxRules ?? DEFAULT_RECALL_RULES_TOOL.maxRules;
  toResolver(options.partition); // a malformed template is refused here, not at the first call
  return tool(
    async (input: z.infer<typeof RecallRulesInputSchema>, config?: RunnableConfig): Promise<string> => {
      const partition = partitionOf(config, options.partition);
      const rules = await listRules(options.ledger, { partition, tool: input.tool });
      if (rules.length === 0) return `No rules are stored for ${JSON.stringify(input.tool)}.`;
      const ranked = await rank(rules, input, partition, options.retriever);
      const shown = ranked.slice(0, maxRules);
      const more = ranked.length - shown.length;
      return [
        `Rules for \`${input.tool}\`:`,
        ...shown.map((r) => `- [${r.priority}] ${oneLine(r.rule)}`),
        ...(more > 0 ? [`(${more} more, less relevant, not shown.)`] : []),
      ].join("\n");
    },
    {
      name: options.name ?? DEFAULT_RECALL_RULES_TOOL.name,
      description:
        "Recall the rules stored for one of your tools: the normal-priority ones, and any the system prompt " +
        "left out. Call it before using a tool when you need its rules.",
      schema: RecallRulesInputSchema,
    },
  );
}

/** Pinned rules first (listing order), then normal ones by relevance to the query. */
async function rank(
  rules: RuleView[],
  input: z.infer<typeof RecallRulesInputSchema>,
  partition: string,
  retriever: LessonRetriever | undefined,
): Promise<RuleView[]> {
  const pinned = rules.filter((r) => isPinned(r));
  const normal = rules.filter((r) => !isPinned(r));
  const query = input.query?.trim();
  if (!query || normal.length === 0) return [...pinned, ...normal];
  let order: Map<string, number>;
  if (retriever) {
    const docs = await retriever.retrieve(query, { partition, tool: input.tool, k: normal.length });
    order = new Map(docs.map((d, i) => [String(d.metadata.id), i]));
  } else {
    const words = tokenSet(query);
    order = new Map(
      normal.map((r) => [r.id, [...tokenSet(r.rule)].some((w) => words.has(w)) ? 0 : 1] as [string, number]),
    );
  }
  const at = (r: RuleView) => order.get(r.id) ?? Number.MAX_SAFE_INTEGER;
  return [...pinned, ...[...normal].sort((a, b) => at(a) - at(b))];
}
