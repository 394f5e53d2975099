/**
 * `tool-lessons/schema`: the zod schemas of what the ledger stores and of the operator's settings,
 * with the settings' defaults (`DEFAULT_SETTINGS`), for code that reads rows or settings from
 * outside (an export, another process, a file) and wants them checked as the package checks
 * them. The row types themselves are exported from the package root too; the schemas of the
 * evaluation files are in `tool-lessons/evaluate`.
 */
export {
  type ArgShape,
  type CallRecord,
  CallRecordSchema,
  type ErrorClass,
  type Evidence,
  type Example,
  type ExampleSource,
  type Learned,
  type LearnedLine,
  LearnedSchema,
  type Offer,
  type Refusal,
  type RefusalKind,
  type RefusalReason,
  RefusalReasonSchema,
  type Revision,
  RevisionSchema,
  type RevisionStatus,
  type RouteRecord,
  RouteRecordSchema,
  type Rule,
  type RulePriority,
  type RuleSource,
  RuleSchema,
  type OutputSummary,
  type EvaluatedCall,
  EvaluatedCallSchema,
  type ToolStats,
  ToolStatsSchema,
  type Guideline,
  GuidelineSchema,
  type GuidelineRefusal,
  type ToolMemoryState,
  ToolMemoryStateSchema,
  type ToolCard,
  ToolCardSchema,
  type TurnRecord,
  TurnRecordSchema,
} from "./ledger/schema.js";
export { DEFAULT_SETTINGS, parseSettings, type Settings, type SettingsInput, SettingsSchema } from "./settings.js";
export { readEnv, type ToolLessonsEnv } from "./env.js";
