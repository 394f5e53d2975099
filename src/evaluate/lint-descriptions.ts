/**
 * The description linter: each tool checked against seed 002's six rules, saying which fails,
 * where, and how to fix it. Deterministic by default (code only; the near neighbours come from
 * the router's own similarity, so the neighbour named is the one routing would confuse); an
 * optional chat model adds a second opinion, checked with zod like every model reply.
 *
 * | rule                   | fails when                                                              |
 * |------------------------|-------------------------------------------------------------------------|
 * | `boundary`             | a near neighbour exists and no boundary sentence names it               |
 * | `constraints-in-prose` | a format, range, enum or prefix is stated in prose and not in the schema |
 * | `vague-parameter`      | a parameter name says nothing (`arg1`, `data`, `input`), or a bare `email` / `id` where two kinds exist |
 * | `no-return`            | nothing says what the tool returns                                      |
 * | `side-effect-late`     | it writes, sends, charges or deletes, and the first clause does not say so |
 * | `mode-switch`          | a mode or action parameter switches between jobs                        |
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { RunnableConfig } from "@langchain/core/runnables";
import { InMemoryStore } from "@langchain/langgraph";
import { InvalidInput } from "../errors.js";
import { ToolIndex, type ToolIndexOptions } from "../routing/tool-index.js";
import { definedOnly } from "../internal.js";
import { registerTools } from "../learn/register.js";
import type { ToolSource } from "../ledger/cards.js";
import { Ledger } from "../ledger/ledger.js";
import type { ToolCard } from "../ledger/schema.js";
import { LINT_RULES, type LintFinding, type LintRule, type Neighbour } from "./lint-findings.js";
import { secondOpinion } from "./lint-opinion.js";
import { lintCard } from "./lint-rules.js";

// The linter's door: `tool-lessons/evaluate` and the CLI import its names from here.
export {
  findingLine,
  LINT_RULE_SUMMARIES,
  LINT_RULES,
  type LintFinding,
  type LintRule,
  type Neighbour,
} from "./lint-findings.js";
export { type LintContext, lintCard } from "./lint-rules.js";

/** What {@link lintDescriptions} returns. */
export interface LintReport {
  /** Tools checked. */
  tools: number;
  /** Tools with at least one finding. */
  failing: number;
  /** Tools failing each rule (deterministic and model findings together). */
  counts: Record<LintRule, number>;
  /** Every finding, by tool then rule. */
  findings: LintFinding[];
  /** Each tool's near neighbours (similarity at or above `minNeighbourSimilarity`). */
  neighbours: Record<string, Neighbour[]>;
  /** Second-opinion replies that could not be used, one line each. */
  modelNotes: string[];
}

/** Options of {@link lintDescriptions}. */
export interface LintOptions {
  /**
   * Least routing similarity for another tool to count as a near neighbour (one routing would
   * confuse). On MetaTool's 199 tools about one in six has one (docs/benchmarks.md); the nearest of a
   * typical tool scores about 0.2.
   * @default 0.3
   */
  minNeighbourSimilarity?: number;
  /**
   * Options of the routing index whose similarity finds neighbours, as the application routes.
   * @default {} (the index's defaults: offline lexical embeddings)
   */
  index?: Omit<ToolIndexOptions, "ledger">;
  /**
   * A chat model for a second opinion: one call per tool; its findings are marked `model`.
   * @default undefined (deterministic only)
   */
  model?: BaseChatModel;
  /**
   * Rules to check.
   * @default every rule
   */
  rules?: readonly LintRule[];
}

/** The defaults of {@link LintOptions} (`model` has none: without one the linter is deterministic). */
export const DEFAULT_LINT_OPTIONS: Readonly<Required<Omit<LintOptions, "model">>> = Object.freeze({
  minNeighbourSimilarity: 0.3,
  index: Object.freeze({}),
  rules: LINT_RULES,
});

// ------------------------------------------------------------------ every tool

const PARTITION = "lint";

/** Most near neighbours considered per tool. */
const MAX_NEIGHBOURS = 3;

/**
 * Each tool's near neighbours: its own routing vector routed like a request, in an index of the
 * tools built as the application routes ({@link ToolIndex}), keeping those at or above
 * `minSimilarity`.
 */
export async function nearNeighbours(
  tools: readonly ToolSource[],
  options: Pick<LintOptions, "index" | "minNeighbourSimilarity"> = {},
): Promise<{ cards: ToolCard[]; neighbours: Map<string, Neighbour[]> }> {
  const min = options.minNeighbourSimilarity ?? DEFAULT_LINT_OPTIONS.minNeighbourSimilarity;
  const ledger = new Ledger(new InMemoryStore());
  // Every tool of the catalog is linted, look-alike names too (registration would refuse them: the lint names them).
  await registerTools(ledger, tools, { partition: PARTITION, lookalikes: "report" });
  const index = new ToolIndex({ ...(options.index ?? DEFAULT_LINT_OPTIONS.index), ledger });
  await index.reindex(PARTITION);
  const cards = await ledger.listCards(PARTITION);
  const byName = new Map(cards.map((c) => [c.name, c]));
  const neighbours = new Map<string, Neighbour[]>();
  for (const tool of tools) {
    const card = byName.get(tool.name)!;
    const [vector] = await index.cardVectors(PARTITION, card);
    const offers = await index.routeVector(PARTITION, vector, { k: MAX_NEIGHBOURS, exclude: new Set([card.name]) });
    neighbours.set(
      card.name,
      offers
        .filter((o) => o.score >= min)
        .map((o) => ({ tool: o.tool, similarity: Math.round(o.score * 1000) / 1000 })),
    );
  }
  return { cards: tools.map((t) => byName.get(t.name)!), neighbours };
}

/**
 * Lint every tool: the six rules of seed 002 (deterministic), then, with `model`, its second
 * opinion per tool. Only what the author wrote is judged (description and argument schema).
 * @throws InvalidInput for no tools, two tools of one name, or an unknown rule.
 */
export async function lintDescriptions(
  tools: readonly ToolSource[],
  options: LintOptions = {},
  config?: RunnableConfig,
): Promise<LintReport> {
  const o = { ...DEFAULT_LINT_OPTIONS, ...definedOnly(options) };
  if (tools.length === 0) throw new InvalidInput("lintDescriptions: there are no tools to lint.");
  const unknownRule = o.rules.find((r) => !(LINT_RULES as readonly string[]).includes(r));
  if (unknownRule !== undefined)
    throw new InvalidInput(`Unknown lint rule "${unknownRule}"; the rules are ${LINT_RULES.join(", ")}.`);
  const { cards, neighbours } = await nearNeighbours(tools, o);
  const findings: LintFinding[] = [];
  const modelNotes: string[] = [];
  for (const card of cards) {
    const near = neighbours.get(card.name) ?? [];
    findings.push(...lintCard(card, { neighbours: near, rules: o.rules }));
    if (options.model) {
      const opinion = await secondOpinion(options.model, card, near, config);
      findings.push(...opinion.findings.filter((f) => o.rules.includes(f.rule)));
      if (opinion.note) modelNotes.push(opinion.note);
    }
  }
  const order = new Map(cards.map((c, i) => [c.name, i]));
  findings.sort(
    (a, b) =>
      order.get(a.tool)! - order.get(b.tool)! ||
      LINT_RULES.indexOf(a.rule) - LINT_RULES.indexOf(b.rule) ||
      (a.source < b.source ? -1 : a.source > b.source ? 1 : 0),
  );
  const counts = Object.fromEntries(
    LINT_RULES.map((r) => [r, new Set(findings.filter((f) => f.rule === r).map((f) => f.tool)).size]),
  ) as Record<LintRule, number>;
  return {
    tools: cards.length,
    failing: new Set(findings.map((f) => f.tool)).size,
    counts,
    findings,
    neighbours: Object.fromEntries(cards.map((c) => [c.name, neighbours.get(c.name) ?? []])),
    modelNotes,
  };
}
