/**
 * The deterministic synthesis of a guideline: from the statistics and the recent calls grouped by
 * what went wrong (error class, or the evaluation's signals) and by what worked (argument names and
 * masked shapes). Every statement carries its count ("in 8 of 20 recent calls"), so nothing is
 * stated as always true, and a part the calls do not support says "Not enough data".
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { oneLine } from "../internal.js";
import type { ArgShape, ErrorClass, EvaluatedCall, EvaluationSignal } from "../ledger/schema.js";
import type { GuidelineDraft, GuidelineSynthesizer, SynthesisInput, SynthesisOutcome } from "./types.js";

/** What a part says when the recent calls do not support anything. */
export const NOT_ENOUGH_DATA = "Not enough data.";

/** Most lines of "what works" and of "common issues"; best practices are two or three. */
export const MAX_PART_LINES = 3;

/** What a poor call is grouped by: its error class when it failed, else its first signal. */
export type IssueLabel = Exclude<EvaluationSignal, "error"> | `error:${ErrorClass}` | "other";

/** The signals of a successful call, in the order they group it. */
const SIGNAL_ORDER: readonly Exclude<EvaluationSignal, "error">[] = [
  "wrong_tool",
  "missing_argument",
  "invalid_argument",
  "no_results",
  "empty",
  "truncated",
  "warning",
  "inconsistent_output",
  "slow",
];

/** What an issue is, why it happens, and the practice that avoids it. */
const ISSUES: Readonly<Record<IssueLabel, { what: string; why: string; practice: string }>> = Object.freeze({
  no_results: {
    what: "Succeeded but returned no results",
    why: "the request matched nothing, often because it was vague or too broad",
    practice:
      "Make the request specific (name exactly what to look for) before calling; a vague request finds nothing.",
  },
  empty: {
    what: "Succeeded but returned empty output",
    why: "nothing came back for what was asked",
    practice: "Check that the request names something this tool can answer before calling it.",
  },
  truncated: {
    what: "Returned output that was cut off",
    why: "the answer was longer than the tool returns at once",
    practice: "Ask for less at a time (a narrower request or a lower limit) so the answer is not cut off.",
  },
  warning: {
    what: "Succeeded with a warning",
    why: "an argument was not supported, or was replaced by a default",
    practice: "Use only argument values the tool supports, and read its warnings.",
  },
  slow: {
    what: "Took far longer than usual",
    why: "well above the tool's median time",
    practice: "Narrow the request when the answer is needed quickly.",
  },
  wrong_tool: {
    what: "Was called for requests another tool fits better",
    why: "the request was not what this tool is for",
    practice: "Check that the request is what this tool is for; use another tool otherwise.",
  },
  missing_argument: {
    what: "Was called without a required argument",
    why: "the tool needs it to answer",
    practice: "Pass each required argument.",
  },
  invalid_argument: {
    what: "Was called with an invalid or badly formatted argument",
    why: "its format did not fit what the tool expects",
    practice: "Check each argument's format against the tool's schema before calling.",
  },
  inconsistent_output: {
    what: "Returned output that does not answer the request",
    why: "the result did not match what was asked",
    practice: "Check that the request is one this tool answers, and say exactly what is wanted.",
  },
  "error:validation": {
    what: "Failed with its arguments refused",
    why: "an argument did not match the tool's schema or format",
    practice: "Check each argument's format against the tool's schema before calling.",
  },
  "error:not_found": {
    what: "Failed with not found",
    why: "what was asked for does not exist under that name or id",
    practice: "Look up the exact name or id first instead of guessing it.",
  },
  "error:permission": {
    what: "Failed with permission denied",
    why: "the caller may not do this",
    practice: "Call it only for what the caller is allowed to do.",
  },
  "error:rate_limit": {
    what: "Failed with a rate limit",
    why: "too many calls in a short time",
    practice: "Space out calls instead of calling it many times in a row.",
  },
  "error:timeout": {
    what: "Failed with a timeout",
    why: "the tool did not answer in time",
    practice: "Narrow the request so the tool can answer in time.",
  },
  "error:upstream": {
    what: "Failed upstream",
    why: "a service behind the tool failed",
    practice: "After an upstream failure, retry later rather than at once.",
  },
  "error:unknown": {
    what: "Failed with an error",
    why: "the error did not say why",
    practice: "Read the error before calling again with the same arguments.",
  },
  other: {
    what: "Executed but scored poorly",
    why: "its evaluation found the result weak for the request",
    practice: "Say exactly what is wanted in the request.",
  },
});

const GENERIC_PRACTICES = [
  "Prefer the argument patterns of the calls that scored well.",
  "Use it for what its description says; choose another tool for other requests.",
];

/** The issue a call is grouped under, or `null` for a call that scored 1. */
export function issueOf(row: EvaluatedCall): IssueLabel | null {
  if (row.score === 1) return null;
  if (!row.success) return `error:${row.errorClass ?? "unknown"}`;
  return SIGNAL_ORDER.find((s) => row.signals.includes(s)) ?? "other";
}

/** `name as shape` for each argument: what a group of calls had in common. Names and shapes, never values. */
export function argsPattern(args: readonly ArgShape[]): string {
  return args.length === 0 ? "no arguments" : args.map((a) => `${a.name} as ${a.shape}`).join(", ");
}

/** Groups of rows by key, largest first, ties in order of first appearance. */
function groups<T>(rows: readonly T[], keyOf: (row: T) => string | null): { key: string; rows: T[] }[] {
  const byKey = new Map<string, T[]>();
  for (const row of rows) {
    const key = keyOf(row);
    if (key === null) continue;
    const list = byKey.get(key) ?? [];
    list.push(row);
    byKey.set(key, list);
  }
  return [...byKey].map(([key, list]) => ({ key, rows: list })).sort((a, b) => b.rows.length - a.rows.length);
}

/** The first sentence of a description, on one line. */
function firstSentence(text: string): string {
  const line = oneLine(text);
  const end = /[.!?](?=\s|$)/.exec(line);
  return end ? line.slice(0, end.index + 1) : line;
}

/** The deterministic draft of one tool's guideline. Pure. */
export function synthesizeByCode(input: SynthesisInput): GuidelineDraft {
  const { recent, limits } = input;
  const n = recent.length;
  const of = (k: number) => `${k} of ${n} recent call${n === 1 ? "" : "s"}`;
  const fits = (line: string) => line.length <= limits.maxLineLength;

  const described = firstSentence(input.description);
  const coreFunction = described !== "" && fits(described) ? described : NOT_ENOUGH_DATA;

  const good = recent.filter((r) => r.score === 1);
  const whatWorks = groups(good, (r) => argsPattern(r.args))
    .slice(0, MAX_PART_LINES)
    .map((g) => {
      const line = `Calls with ${g.key} scored well in ${of(g.rows.length)}.`;
      return fits(line)
        ? line
        : `Calls with the arguments ${g.rows[0].args.map((a) => a.name).join(", ")} scored well in ${of(g.rows.length)}.`;
    });
  if (whatWorks.length === 0) whatWorks.push(`Not enough data: none of the ${n} recent calls scored well.`);

  const issues = groups(recent, (r) => issueOf(r)).slice(0, MAX_PART_LINES);
  const commonIssues =
    issues.length === 0
      ? [`No issues in the ${n} recent calls.`]
      : issues.map((g) => {
          const issue = ISSUES[g.key as IssueLabel];
          return `${issue.what} in ${of(g.rows.length)}: ${issue.why}.`;
        });

  const practices: string[] = [];
  const add = (line: string) => {
    if (!practices.includes(line) && practices.length < MAX_PART_LINES) practices.push(line);
  };
  const shapesThatWorked = good.length > 0 ? argsPattern(good[good.length - 1].args) : "";
  for (const g of issues) {
    const label = g.key as IssueLabel;
    if ((label === "error:validation" || label === "invalid_argument") && good.length > 0 && good[0].args.length > 0) {
      const line = `Pass arguments as the calls that scored well did: ${shapesThatWorked}.`;
      add(fits(line) ? line : ISSUES[label].practice);
    } else if (label === "missing_argument" && input.requiredArgs.length > 0) {
      add(`Pass each required argument: ${input.requiredArgs.join(", ")}.`);
    } else {
      add(ISSUES[label].practice);
    }
  }
  for (const line of GENERIC_PRACTICES)
    if (practices.length < 2 && (good.length > 0 || line !== GENERIC_PRACTICES[0])) add(line);
  if (practices.length < 2) add("Read the tool's description before calling it.");

  return { coreFunction, whatWorks, commonIssues, bestPractices: practices };
}

/** Writes guidelines by code alone ({@link synthesizeByCode}): no model, the default. */
export class DeterministicSynthesizer implements GuidelineSynthesizer {
  readonly name = "deterministic";
  readonly callsModel = false;

  async synthesize(input: SynthesisInput, config?: RunnableConfig): Promise<SynthesisOutcome> {
    config?.signal?.throwIfAborted();
    return { ok: true, draft: synthesizeByCode(input) };
  }
}
