/**
 * `tool-lessons/rules`: tool-scoped rules. Edicts captured from a user's turn, the aliases that
 * tie a word to a tool, repeated failures observed as rules, the scopes a rule lives in, and
 * recall of the normal-priority ones (`LessonRetriever`, a `BaseRetriever`; the
 * `recall_tool_rules` tool). The
 * pinned block the model sees is `renderRulesBlock` in `tool-lessons/prompt`.
 */
export { captureEdicts, type CaptureEdictsOptions, type EdictCandidate } from "./capture.js";
export { DEFAULT_TOOL_ALIASES, type ToolAlias } from "./aliases.js";
export { type RuleScope, type RuleSource, type RuleView, SHARED_SCOPE, UNSCOPED_TOOL } from "./model.js";
export { observeRepeatedFailures } from "./observe.js";
export { type RecordedEdicts, recordEdicts, type RecordEdictsOptions, recordObservations } from "./store.js";
export { LessonRetriever, type LessonRetrieverOptions } from "./retriever.js";
export { createRecallRulesTool, type RecallRulesToolOptions } from "./recall-tool.js";
