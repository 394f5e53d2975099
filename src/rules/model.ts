/**
 * The rule model: a tool-scoped rule is `{ id, tool, rule, priority, source, tags, createdAt,
 * updatedAt }` (the ledger's `Rule` row), in one partition or in the shared scope. This module
 * holds the decisions every other piece of `src/rules`, the prompt block and the manager share:
 * what is pinned, what is unscoped, which scope a rule is in, and the JSON view of a rule.
 */
import type { Rule, RulePriority, RuleSource } from "../ledger/schema.js";

export { compareRules, ruleId, ruleTextKey } from "../ledger/collections/rules.js";
export type { Rule, RulePriority, RuleSource };

/**
 * The `tool` of an unscoped rule: an edict that named no tool, in a turn that ran none. Stored
 * and listed like any rule, never pinned into the prompt. No tool can have this name (chat model
 * APIs allow letters, digits, `_` and `-` in tool names).
 */
export const UNSCOPED_TOOL = "*";

/**
 * The partition that holds shared rules: those every partition's prompt carries. Written only by
 * an operator's explicit call (`LessonManager.promoteRule`, or `putRule` with `scope: "shared"`).
 * Reserved: no caller's id can produce it (an encoded id never holds `~`, a template may not
 * start with it, a resolver function may not answer it; see `caller/partition.ts`), and a rule
 * write naming it as a partition is refused.
 */
export const SHARED_SCOPE = "~shared";

/** The name of the recall tool (`createRecallRulesTool`), as the prompt block refers to it. */
export const RECALL_TOOL_NAME = "recall_tool_rules";

/** Where a rule binds: the partition it was made in, or every partition (the shared scope). */
export type RuleScope = "partition" | "shared";

/**
 * The one predicate of what reaches the model unasked: critical and high rules are pinned into
 * the system prompt's rules block; normal ones are served on demand (the lesson retriever and
 * the recall tool). Used by the block, the retriever, the recall tool and the manager alike.
 */
export function isPinned(rule: Pick<Rule, "priority">): boolean {
  return rule.priority === "critical" || rule.priority === "high";
}

/** Whether a rule names no tool ({@link UNSCOPED_TOOL}): kept out of the prompt. */
export function isUnscoped(rule: Pick<Rule, "tool">): boolean {
  return rule.tool === UNSCOPED_TOOL;
}

/** The scope a stored rule is in, from the partition it is stored in. */
export function scopeOf(rule: Pick<Rule, "partition">): RuleScope {
  return rule.partition === SHARED_SCOPE ? "shared" : "partition";
}

/**
 * A rule as the CLI, `rulesJson()` and the recall tool hand it out: the stored row plus its
 * scope. Plain JSON (numbers are milliseconds since the epoch).
 */
export interface RuleView extends Rule {
  scope: RuleScope;
}

/** The {@link RuleView} of a stored rule. */
export function viewOf(rule: Rule): RuleView {
  return { ...rule, scope: scopeOf(rule) };
}
