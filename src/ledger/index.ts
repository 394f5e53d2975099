/**
 * `tool-lessons/ledger`: the durable truth on a LangGraph `BaseStore`. `openLedger` and `Ledger`
 * (also at the root), the rows it keeps, the card built from a tool, and the compare-and-set
 * contract for a store of your own. The SQLite and Postgres backends have their own entry
 * points (`tool-lessons/sqlite`, `tool-lessons/postgres`).
 */
export {
  Ledger,
  type LedgerCloseOptions,
  type LedgerOptions,
  type LedgerRecorder,
  type ListOptions,
  type LedgerFailureKind,
  type RuleInput,
  type RunRecords,
} from "./ledger.js";
export { openLedger, type OpenLedgerOptions } from "./open.js";
export { cardFromTool, type ExampleWithSource, exampleSources, type ToolSource } from "./cards.js";
export {
  type CasCheck,
  type CasFailure,
  type CasOutcome,
  type CasValue,
  type CompareAndSetStore,
  compareAndSet,
} from "./cas.js";
export type { RevisionClaim } from "./collections/commit.js";
export { NotFound } from "../errors.js";
export type {
  ArgShape,
  CallRecord,
  ErrorClass,
  EvaluatedCall,
  EvaluationScore,
  EvaluationSignal,
  Evidence,
  Example,
  ExampleSource,
  Guideline,
  GuidelineRefusal,
  GuidelineRefusalReason,
  Learned,
  LearnedLine,
  NewRecord,
  Offer,
  OutputSummary,
  Refusal,
  RefusalKind,
  RefusalReason,
  Revision,
  RevisionStatus,
  RouteRecord,
  Rule,
  RulePriority,
  ToolCard,
  ToolMemoryState,
  ToolStats,
  TurnRecord,
} from "./schema.js";
