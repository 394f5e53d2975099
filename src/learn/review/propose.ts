/**
 * Propose: one proposer call for one tool's evidence, and whether the review counts as done.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { Proposer, ToolEvidence } from "../proposer.js";
import type { Proposal } from "../types.js";
import type { ToolDetection } from "../detect.js";

/** What one proposer call gave, and the review mark it earns. */
export interface Proposed {
  proposal: Proposal;
  /**
   * The newest call record id this review read, to store as the tool's review mark; absent when
   * the tool has no calls, the model call failed (provider down, timeout) or its reply could not
   * be used (not JSON, wrong shape): that reviewed nothing, so the next review asks again.
   */
  reviewedThrough?: string;
}

/** Rejections that mean the model gave nothing usable: the tool is asked again next review. */
const UNREVIEWED: ReadonlySet<string> = new Set(["model_error", "reply_not_json", "reply_wrong_shape"]);

/** Ask `proposer` for lessons from one tool's evidence (`config` is passed to a model call). */
export async function proposeLessons(
  proposer: Proposer,
  evidence: ToolEvidence,
  detection: Pick<ToolDetection, "lastCallId">,
  config?: RunnableConfig,
): Promise<Proposed> {
  const proposal = await proposer.propose(evidence, config);
  const reviewed = detection.lastCallId !== undefined && !UNREVIEWED.has(proposal.rejected?.reason ?? "");
  return reviewed ? { proposal, reviewedThrough: detection.lastCallId } : { proposal };
}
