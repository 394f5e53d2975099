/**
 * `tool-lessons/evaluate`: measure what learning does for routing on labelled traffic.
 *
 * - `simulate` replays labelled requests (MetaTool's JSONL format: `ToolSpecSchema`,
 *   `LabelledRequestSchema`) through review and apply in memory and routes held-out requests
 *   before and after; the `simulate` command of the CLI is a thin wrapper over it.
 * - The ranking metrics it reports (hit, recall and nDCG at k, top-k accuracy, AUROC), pure
 *   functions for scoring any router against labels.
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
  mean,
  meanNdcgAtK,
  meanRecallAtK,
  ndcgAtK,
  type RankedCase,
  recallAtK,
  topKAccuracy,
} from "./metrics.js";
