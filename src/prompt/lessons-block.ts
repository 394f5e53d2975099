/**
 * The lessons block: what the inject node puts in front of the agent for one turn, as one system
 * message. Pure and byte-stable: the same input gives the same bytes (no clock, no locale, stored
 * order kept), so a provider's prompt cache keeps the prefix.
 *
 * Sections, in order: the pinned `## Tool-scoped rules` block (critical and high rules, see
 * `rules-block.ts`), `## Tools for this turn` (per routed tool, in routed order: its description,
 * learned notes, "Not for" lines, the example call, its guideline), `## Rules that may apply`
 * (normal-priority rules retrieved for the request).
 *
 * ## The budget and its cut order
 *
 * The block's size is estimated in tokens ({@link estimateTokens}: one per four characters,
 * rounded up). Over `maxTokens`, parts are cut in this order, each step taken whole before the
 * next, and within a step the lowest-routed tool first:
 *
 * 1. retrieved normal-priority rules (the last first);
 * 2. guidelines;
 * 3. example calls;
 * 4. "Not for" lines;
 * 5. learned usage notes;
 * 6. tool descriptions (the bound tool still carries its own description);
 * 7. high rules (the block then says how many were left out and how to recall them).
 *
 * Critical rules are never cut: a block of critical rules alone may exceed the budget.
 */
import { oneLine } from "../internal.js";
import type { Rule } from "../rules/model.js";
import { renderRulesBlock } from "./rules-block.js";

/** One routed tool as the block shows it. */
export interface BlockTool {
  name: string;
  /** What the author wrote (the augmented description when the author wrote none). */
  description: string;
  /** Learned usage notes, in stored order. */
  notes: readonly string[];
  /** Learned "Not for …; use …" lines, in stored order. */
  notFor: readonly string[];
  /** The learned example call (`Example call: {...}`), if any. */
  exampleCall?: string;
  /** The tool's guideline as rendered by `renderGuideline`, if any. */
  guideline?: string;
}

/** A retrieved normal-priority rule. */
export interface BlockRule {
  tool: string;
  rule: string;
}

/** Input of {@link renderLessonsBlock}. */
export interface LessonsBlockInput {
  /** The rules binding the caller for the routed tools (the pinned ones are picked out). */
  rules: readonly Rule[];
  /** The routed tools, best first. */
  tools: readonly BlockTool[];
  /** Normal-priority rules retrieved for the request, best first. */
  retrieved: readonly BlockRule[];
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
export const CUT_ORDER = Object.freeze([
  "retrieved_rules",
  "guidelines",
  "example_calls",
  "not_for",
  "notes",
  "descriptions",
  "high_rules",
] as const);

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

/** Heading of the tools section. */
export const TOOLS_HEADING = "## Tools for this turn";

/** Heading of the retrieved rules section. */
export const RETRIEVED_HEADING = "## Rules that may apply";

/** Estimated tokens of a text: one per four characters, rounded up (no tokenizer is loaded). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

interface Draft {
  tools: BlockTool[];
  retrieved: BlockRule[];
  showDescriptions: boolean;
  maxRules: number;
}

/**
 * Render the lessons block for one turn, within the token budget (see the cut order above).
 * Pure; byte-stable for the same input.
 */
export function renderLessonsBlock(input: LessonsBlockInput, options: LessonsBlockOptions = {}): LessonsBlock {
  const maxTokens = options.maxTokens ?? DEFAULT_LESSONS_BLOCK.maxTokens;
  const maxRules = options.maxRules ?? DEFAULT_LESSONS_BLOCK.maxRules;
  const toolNames = input.tools.map((t) => t.name);
  const draft: Draft = {
    tools: input.tools.map((t) => ({ ...t, notes: [...t.notes], notFor: [...t.notFor] })),
    retrieved: [...input.retrieved],
    showDescriptions: true,
    maxRules,
  };
  const counts = new Map<CutStep, number>();
  let text = render(draft, input.rules, toolNames);
  for (const step of CUT_ORDER) {
    while (estimateTokens(text) > maxTokens) {
      const before = structuredClone(draft);
      if (!cutStep(draft, step, input.rules, toolNames)) break;
      const next = render(draft, input.rules, toolNames);
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
function cutStep(draft: Draft, step: CutStep, rules: readonly Rule[], tools: readonly string[]): boolean {
  const lastWith = (has: (t: BlockTool) => boolean): BlockTool | undefined => [...draft.tools].reverse().find(has);
  switch (step) {
    case "retrieved_rules":
      return draft.retrieved.pop() !== undefined;
    case "guidelines": {
      const t = lastWith((x) => x.guideline !== undefined);
      if (t) delete t.guideline;
      return t !== undefined;
    }
    case "example_calls": {
      const t = lastWith((x) => x.exampleCall !== undefined);
      if (t) delete t.exampleCall;
      return t !== undefined;
    }
    case "not_for": {
      const t = lastWith((x) => x.notFor.length > 0);
      if (t) t.notFor = t.notFor.slice(0, -1);
      return t !== undefined;
    }
    case "notes": {
      const t = lastWith((x) => x.notes.length > 0);
      if (t) t.notes = t.notes.slice(0, -1);
      return t !== undefined;
    }
    case "descriptions": {
      if (!draft.showDescriptions) return false;
      draft.showDescriptions = false;
      return true;
    }
    case "high_rules": {
      const shown = renderRulesBlock(rules, { tools, maxRules: draft.maxRules }).shown;
      if (!shown.some((r) => r.priority === "high")) return false;
      const critical = shown.filter((r) => r.priority === "critical").length;
      draft.maxRules = Math.max(critical, shown.length - 1);
      return true;
    }
  }
}

function render(draft: Draft, rules: readonly Rule[], tools: readonly string[]): string {
  const parts: string[] = [];
  const pinned = renderRulesBlock(rules, { tools, maxRules: draft.maxRules }).text.trimEnd();
  if (pinned !== "") parts.push(pinned);
  const sections: string[] = [];
  for (const t of draft.tools) {
    const lines: string[] = [`### \`${oneLine(t.name)}\``];
    const description = oneLine(t.description);
    if (draft.showDescriptions && description !== "") lines.push(description);
    const learned = [...t.notes, ...t.notFor, ...(t.exampleCall !== undefined ? [t.exampleCall] : [])];
    if (learned.length > 0) lines.push("Learned from use:", ...learned.map((l) => `- ${oneLine(l)}`));
    if (t.guideline !== undefined) lines.push(t.guideline);
    // A tool with nothing to say beyond its name is left out: the model has it bound anyway.
    if (lines.length > 1) sections.push(lines.join("\n"));
  }
  if (sections.length > 0) parts.push(`${TOOLS_HEADING}\n\n${sections.join("\n\n")}`);
  if (draft.retrieved.length > 0) {
    parts.push(
      `${RETRIEVED_HEADING}\n${draft.retrieved.map((r) => `- \`${oneLine(r.tool)}\`: ${oneLine(r.rule)}`).join("\n")}`,
    );
  }
  return parts.length === 0 ? "" : `${parts.join("\n\n")}\n`;
}
