/**
 * `tool-lessons/evaluate`: measure what learning does for routing on labelled traffic.
 *
 * - `simulate` replays labelled requests (MetaTool's JSONL format: `ToolSpecSchema`,
 *   `LabelledRequestSchema`) through review and apply in memory and routes held-out requests
 *   before and after; the `simulate` command of the CLI is a thin wrapper over it.
 * - The ranking metrics it reports (hit, recall and nDCG at k, top-k accuracy, AUROC), pure
 *   functions for scoring any router against labels.
 * - Selection accuracy (seed 002): `evaluateSelection` runs labelled cases against the router or
 *   a chat model (each case among its own `candidates` when it has them; recall@k, the "no tool"
 *   figures and a breakdown by any case field), `diagnose` reads the confusion matrix's
 *   off-diagonal (`duplicateTools` finds copies to merge or rename), `compareRuns` sets two
 *   runs side by side, `lintDescriptions` checks descriptions against the six rules, and
 *   `renderReport` writes the self-contained HTML report.
 * - The "no tool" decision fitted on a partition's own traffic: one threshold on the best score
 *   (`calibrateAbstain`) or a small model over the scores and the request (`fitAbstainModel`,
 *   `abstainProbability`). Research: the router abstains only through `minScore`.
 */
export {
  type LabelledRequest,
  LabelledRequestSchema,
  type RoutingScores,
  simulate,
  type SimulateOptions,
  type SimulationReport,
  type ToolSpec,
  ToolSpecSchema,
} from "./simulate.js";
export {
  auroc,
  hitAtK,
  meanNdcgAtK,
  meanRecallAtK,
  ndcgAtK,
  type NoToolFigures,
  noToolFigures,
  type RankedCase,
  recallAtK,
  topKAccuracy,
} from "./metrics.js";

// ---------------------------------------------------------------- selection accuracy (seed 002)
export { type CaseInput, casesInFolds, type EvalCase, parseCases, readCases, type ToolLine } from "./cases.js";
export {
  chatModelSelector,
  type ChatModelSelectorOptions,
  type EvalTool,
  evaluateSelection,
  type EvaluateSelectionOptions,
  routerSelector,
  type RouterSelectorOptions,
  type Selection,
  type SelectionReport,
  type SelectionRequest,
  type SelectionRun,
  type Selector,
  type SummarizeOptions,
} from "./harness.js";
export { type Breakdown, type GroupFigures, type RankingFigures } from "./breakdown.js";
export { duplicateTools } from "./duplicates.js";
export { type Agreement, type CaseResult, type ConfusionMatrix, type ToolScore } from "./confusion.js";
export { type Diagnosis, type DiagnosisKind, diagnose } from "./diagnose.js";
export { compareRuns, type Comparison } from "./compare.js";
export {
  type LintFinding,
  type LintOptions,
  type LintReport,
  type LintRule,
  lintDescriptions,
} from "./lint-descriptions.js";
export { renderReport, type ReportData, reportData, type ReportOptions } from "./report.js";
export { type AbstainOptions, type AbstainSample, calibrateAbstain } from "./calibrate-abstain.js";
export {
  type AbstainExample,
  type AbstainModel,
  type AbstainModelOptions,
  type AbstainObservation,
  abstainProbability,
  fitAbstainModel,
  type ScoreCalibration,
} from "./abstain-model.js";
