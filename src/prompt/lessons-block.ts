/**
 * The lessons block: the one system block a turn adds in front of the agent, the same for the
 * lessons graph and the `createAgent` middleware. Pure and byte-stable: the same input gives the
 * same bytes (no clock, no locale, stored order kept), so a provider's prompt cache keeps the
 * prefix.
 *
 * It carries only what the package's own stores hold about the caller: the pinned
 * `## Tool-scoped rules` block (critical and high rules of the routed tools, see
 * `rules-block.ts`), `## Rules that may apply` (normal-priority rules retrieved for the request),
 * then the routed tools' guidelines (`memory.ts`). What was learned about a tool (usage notes,
 * "Not for" lines, the example call) goes into that tool's own definition (`describe.ts`), and a
 * tool author's description (perhaps a third party's MCP server) is never raised into the system
 * message.
 *
 * ## The budget and its cut order
 *
 * The block's size is estimated in tokens ({@link estimateTokens}: one per four characters,
 * rounded up). Over `maxTokens`, parts are cut in this order, each step taken whole before the
 * next, and within a step the lowest-routed tool first:
 *
 * 1. retrieved normal-priority rules (the last first);
 * 2. guidelines;
 * 3. high rules (the block then says how many were left out and how to recall them).
 *
 * Critical rules are never cut: a block of critical rules alone may exceed the budget.
 */
import { oneLine } from "../internal.js";
import type { Rule } from "../rules/model.js";
import { renderMemoryBlock, type ToolGuidelineEntry } from "./memory.js";
import { renderRulesBlock } from "./rules-block.js";

/** A retrieved normal-priority rule. */
export interface BlockRule {
  tool: string;
  rule: string;
}

/** Input of {@link renderLessonsBlock}. */
export interface LessonsBlockInput {
  /** The rules binding the caller for the routed tools (the pinned ones are picked out). */
  rules: readonly Rule[];
  /** The routed tools' guidelines, best-routed first (`null`: the tool has none). */
  guidelines: readonly ToolGuidelineEntry[];
  /** Normal-priority rules retrieved for the request, best first. */
  retrieved: readonly BlockRule[];
  /**
   * The routed tools: the pinned rules of other tools are left out.
   * @default every tool the rules name
   */
  tools?: readonly string[];
}

/** Options of {@link renderLessonsBlock}. */
export interface LessonsBlockOptions {
  /**
   * Most tokens the block may take (estimated by {@link estimateTokens}); parts are cut in the
   * stated order beyond it, never a critical rule.
   * @default 1500
   */
  maxTokens?: number;
  /**
   * Most rules the pinned block lists before any budget cut (critical ones always).
   * @default 30
   */
  maxRules?: number;
}

/** The defaults of {@link LessonsBlockOptions}. */
export const DEFAULT_LESSONS_BLOCK: Readonly<Required<LessonsBlockOptions>> = Object.freeze({
  maxTokens: 1500,
  maxRules: 30,
});

/** The steps of the cut order, first cut first. */
export const CUT_ORDER = Object.freeze(["retrieved_rules", "guidelines", "high_rules"] as const);

/** One step of {@link CUT_ORDER}. */
export type CutStep = (typeof CUT_ORDER)[number];

/** The rendered block and what the budget cut. */
export interface LessonsBlock {
  /** The system message text; `""` when there is nothing to show. */
  text: string;
  /** Its estimated size in tokens. */
  tokens: number;
  /** Per step of the cut order, how many items were cut (steps with none left out). */
  cut: { step: CutStep; count: number }[];
}

/** Heading of the retrieved rules section. */
export const RETRIEVED_HEADING = "## Rules that may apply";

/** Estimated tokens of a text: one per four characters, rounded up (no tokenizer is loaded). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

interface Draft {
  guidelines: ToolGuidelineEntry[];
  retrieved: BlockRule[];
  maxRules: number;
}

/**
 * Render the lessons block for one turn, within the token budget (see the cut order above).
 * Pure; byte-stable for the same input.
 */
export function renderLessonsBlock(input: LessonsBlockInput, options: LessonsBlockOptions = {}): LessonsBlock {
  const maxTokens = options.maxTokens ?? DEFAULT_LESSONS_BLOCK.maxTokens;
  const draft: Draft = {
    guidelines: input.guidelines.filter((g) => g.guideline !== null),
    retrieved: [...input.retrieved],
    maxRules: options.maxRules ?? DEFAULT_LESSONS_BLOCK.maxRules,
  };
  const counts = new Map<CutStep, number>();
  let text = render(draft, input);
  for (const step of CUT_ORDER) {
    while (estimateTokens(text) > maxTokens) {
      const before = { ...draft, guidelines: [...draft.guidelines], retrieved: [...draft.retrieved] };
      if (!cutStep(draft, step, input)) break;
      const next = render(draft, input);
      // A cut that does not shrink the block (a high rule's "N more" line) is taken back.
      if (next.length >= text.length) {
        Object.assign(draft, before);
        break;
      }
      text = next;
      counts.set(step, (counts.get(step) ?? 0) + 1);
    }
    if (estimateTokens(text) <= maxTokens) break;
  }
  return {
    text,
    tokens: estimateTokens(text),
    cut: CUT_ORDER.filter((s) => counts.has(s)).map((step) => ({ step, count: counts.get(step)! })),
  };
}

/** Cut one item of `step`; false when the step has nothing left to cut. */
function cutStep(draft: Draft, step: CutStep, input: LessonsBlockInput): boolean {
  switch (step) {
    case "retrieved_rules":
      return draft.retrieved.pop() !== undefined;
    case "guidelines":
      return draft.guidelines.pop() !== undefined;
    case "high_rules": {
      const shown = renderRulesBlock(input.rules, { tools: input.tools, maxRules: draft.maxRules }).shown;
      if (!shown.some((r) => r.priority === "high")) return false;
      const critical = shown.filter((r) => r.priority === "critical").length;
      draft.maxRules = Math.max(critical, shown.length - 1);
      return true;
    }
  }
}

function render(draft: Draft, input: LessonsBlockInput): string {
  const parts: string[] = [];
  const pinned = renderRulesBlock(input.rules, { tools: input.tools, maxRules: draft.maxRules }).text.trimEnd();
  if (pinned !== "") parts.push(pinned);
  if (draft.retrieved.length > 0) {
    parts.push(
      `${RETRIEVED_HEADING}\n${draft.retrieved.map((r) => `- \`${oneLine(r.tool)}\`: ${oneLine(r.rule)}`).join("\n")}`,
    );
  }
  const memory = renderMemoryBlock(draft.guidelines);
  if (memory !== "") parts.push(memory);
  return parts.length === 0 ? "" : `${parts.join("\n\n")}\n`;
}
