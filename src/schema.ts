/**
 * `tool-lessons/schema`: the zod schemas of what the ledger stores and of the operator's settings,
 * for code that reads rows or settings from outside (an export, another process, a file) and
 * wants them checked as the package checks them. The row types themselves are exported from the
 * package root too; the schemas of the evaluation files are in `tool-lessons/evaluate`.
 */
export {
  type ArgShape,
  ArgShapeSchema,
  type CallRecord,
  CallRecordSchema,
  type ErrorClass,
  ErrorClassSchema,
  type Evidence,
  EvidenceSchema,
  type Example,
  ExampleSchema,
  type ExampleSource,
  ExampleSourceSchema,
  type Learned,
  type LearnedLine,
  LearnedLineSchema,
  LearnedSchema,
  type Offer,
  OfferSchema,
  type Refusal,
  RefusalSchema,
  type Revision,
  RevisionSchema,
  type RevisionStatus,
  RevisionStatusSchema,
  type RouteRecord,
  RouteRecordSchema,
  type Rule,
  type RulePriority,
  RulePrioritySchema,
  RuleSchema,
  SCHEMA_VERSION,
  type ToolCard,
  ToolCardSchema,
  type TurnRecord,
  TurnRecordSchema,
} from "./ledger/schema.js";
export { parseSettings, type Settings, type SettingsInput, SettingsSchema } from "./settings.js";
