/**
 * Observations after a turn: a tool that failed twice or more in one turn gets a normal-priority
 * `post_turn` rule naming the failure class, so the agent has it on demand the next time it
 * considers that tool. The text is fixed per class: it holds no error message and no argument
 * value, and it is the same every time, so a tool that keeps failing the same way updates one
 * rule (the id follows from tool and text) instead of piling up new ones.
 */
import type { ErrorClass, TurnRecord } from "../ledger/schema.js";

/** Options of {@link observeRepeatedFailures}. */
export interface ObserveOptions {
  /**
   * Failed calls of one tool in one turn that earn an observation.
   * @default 2
   */
  minFailures?: number;
}

/** The defaults of {@link ObserveOptions}. */
export const DEFAULT_OBSERVE_OPTIONS: Readonly<Required<ObserveOptions>> = Object.freeze({ minFailures: 2 });

/** What the agent is told for each failure class. */
const ADVICE: Readonly<Record<ErrorClass, string>> = Object.freeze({
  validation:
    "its arguments were refused (validation): check each argument's format against the schema before calling it",
  not_found: "what it was asked for was not found (not_found): look the item up first and pass the id it returns",
  permission: "it was not allowed (permission): do not retry; ask the user, or use a tool that may do it",
  rate_limit: "it was rate limited (rate_limit): wait before calling it again, and ask for more per call",
  timeout: "it timed out (timeout): ask for less per call, or try again later",
  upstream: "the service behind it failed (upstream): try again later, or tell the user it is down",
  unknown: "it failed (unknown error): read the error before calling it again",
});

/** A candidate `post_turn` rule, ready for `putRule`. */
export interface ObservationCandidate {
  tool: string;
  /** Fixed text naming the failure class: no message, no value. */
  rule: string;
  priority: "normal";
  source: "post_turn";
  /** `["repeated_failure", <error class>]`. */
  tags: string[];
}

/**
 * One observation per tool that failed at least `minFailures` times in the turn, naming the class
 * its failures had most (the first seen on a tie). Pure.
 *
 * @example
 * observeRepeatedFailures({ calls: [
 *   { tool: "refund", outcome: "error", errorClass: "validation" },
 *   { tool: "refund", outcome: "error", errorClass: "validation" },
 * ] })
 * // [{ tool: "refund", rule: "Failed more than once in one turn: its arguments were refused (validation): …", … }]
 */
export function observeRepeatedFailures(
  turn: Pick<TurnRecord, "calls">,
  options: ObserveOptions = {},
): ObservationCandidate[] {
  const minFailures = options.minFailures ?? DEFAULT_OBSERVE_OPTIONS.minFailures;
  const failures = new Map<string, ErrorClass[]>();
  for (const call of turn.calls) {
    if (call.outcome !== "error" || call.tool.trim() === "") continue;
    const classes = failures.get(call.tool) ?? [];
    classes.push(call.errorClass ?? "unknown");
    failures.set(call.tool, classes);
  }
  const out: ObservationCandidate[] = [];
  for (const [tool, classes] of failures) {
    if (classes.length < Math.max(1, minFailures)) continue;
    const errorClass = mostFrequent(classes);
    out.push({
      tool,
      rule: `Failed more than once in one turn: ${ADVICE[errorClass]}.`,
      priority: "normal",
      source: "post_turn",
      tags: ["repeated_failure", errorClass],
    });
  }
  return out;
}

function mostFrequent(classes: readonly ErrorClass[]): ErrorClass {
  const counts = new Map<ErrorClass, number>();
  for (const c of classes) counts.set(c, (counts.get(c) ?? 0) + 1);
  let best = classes[0];
  for (const [c, n] of counts) if (n > (counts.get(best) ?? 0)) best = c;
  return best;
}
