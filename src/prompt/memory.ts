/**
 * What the model is shown of tool memory: each routed tool's guideline (what it is for, what
 * works, common issues and why, best practices), then the statistics block it was written from.
 * The lesson-kinds table shows a guideline `when_routed`: whatever builds the agent's prompt passes
 * the tools routing offered this turn. Byte-stable: the same guidelines in the same order give the
 * same string (no clock, no locale; figures formatted by fixed rules).
 */
import type { Guideline, ToolStats } from "../ledger/schema.js";
import { oneLine } from "../internal.js";

/** The first line of the memory block. */
export const MEMORY_HEADING = "Guidelines from past use of these tools:";

/** One tool's entry: its name and its guideline (`null`: nothing shown for it). */
export interface ToolGuidelineEntry {
  tool: string;
  guideline: Guideline | null;
}

const percent = (rate: number | null): string => (rate === null ? "n/a" : `${Math.round(rate * 100)}%`);
const score = (value: number | null): string => (value === null ? "n/a" : value.toFixed(2));
const time = (ms: number | null): string =>
  ms === null ? "n/a" : ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
const count = (value: number | null): string => (value === null ? "n/a" : String(Math.round(value)));

/** The statistics block: calls, success rate, average score, time and tokens. */
export function renderStatsBlock(stats: ToolStats): string {
  return [
    "Statistics:",
    `- calls: ${stats.totalCalls} evaluated, ${stats.recentCalls} recent`,
    `- success rate: ${percent(stats.successRate)} overall, ${percent(stats.recentSuccessRate)} recent`,
    `- average score (0 to 1): ${score(stats.avgScore)} overall, ${score(stats.recentAvgScore)} recent`,
    `- average time: ${time(stats.avgLatencyMs)}`,
    `- average tokens: ${count(stats.avgTokens)}`,
  ].join("\n");
}

/** One tool's guideline and its statistics block. */
export function renderGuideline(tool: string, guideline: Guideline): string {
  const list = (lines: readonly string[]) => lines.map((l) => `- ${oneLine(l)}`);
  return [
    `Guideline for ${tool} (from its ${guideline.calls} most recent evaluated calls):`,
    `What it is for: ${oneLine(guideline.coreFunction)}`,
    "What works:",
    ...list(guideline.whatWorks),
    "Common issues:",
    ...list(guideline.commonIssues),
    "Best practices:",
    ...guideline.bestPractices.map((l, i) => `${i + 1}. ${oneLine(l)}`),
    renderStatsBlock(guideline.stats),
  ].join("\n");
}

/**
 * The memory block of a prompt: the guidelines of the given tools (those routed this turn), in the
 * order given, each tool once; tools without a guideline are left out. "" when none has one.
 */
export function renderMemoryBlock(entries: readonly ToolGuidelineEntry[]): string {
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const { tool, guideline } of entries) {
    if (guideline === null || seen.has(tool)) continue;
    seen.add(tool);
    parts.push(renderGuideline(tool, guideline));
  }
  return parts.length === 0 ? "" : `${MEMORY_HEADING}\n\n${parts.join("\n\n")}`;
}
