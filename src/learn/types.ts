/**
 * The plain data that flows between the stages of learning: what a proposer suggests
 * ({@link Proposal}), what an operator turned down ({@link TurnedDown}) and a missed request with
 * what routing says about its wording ({@link CoveredMiss}). Types only, shared by the proposers,
 * the vet and the review stages, so none of them imports another for its types.
 */
import type { RefusalReason } from "../ledger/schema.js";
import type { MissedRequest } from "./detect.js";

/** A usage note: how to call the tool, from repeated calling errors. */
export interface ProposedNote {
  /** One line, shown to the model under "Learned from use". */
  text: string;
  /** Ids of the failed call records it rests on. */
  cites: string[];
}

/** A learned example request: a wording that should reach the tool (a routing key). */
export interface ProposedExample {
  /** One line, in a user's words (as stored: masked). */
  text: string;
  /** Ids of the missed requests it rests on. */
  cites: string[];
}

/** A "Not for <kind of request>; use <tool>." line, from requests another tool served. */
export interface ProposedNotFor {
  /** One line starting with "Not for" and ending with "use <tool>". */
  text: string;
  /** The registered tool the line sends those requests to. */
  tool: string;
  /** Ids of the confused requests it rests on (all served by `tool`). */
  cites: string[];
}

/** Why a proposer returned nothing usable (the review goes on; nothing is thrown). */
export type ProposalRejectionReason = Extract<RefusalReason, "model_error" | "reply_not_json" | "reply_wrong_shape">;

/** A proposer's reply that could not be used, and why. */
export interface ProposalRejection {
  reason: ProposalRejectionReason;
  /** What went wrong, for a person (no argument values: the reply saw none). */
  detail: string;
}

/**
 * What a proposer suggests for one tool, one list per kind a proposer writes (named as the card
 * fields they go to). Nothing in it is stored before the vet keeps it.
 */
export interface Proposal {
  notes: ProposedNote[];
  examples: ProposedExample[];
  notFor: ProposedNotFor[];
  /** Set when the proposer's reply was refused as a whole (the lists are then empty). */
  rejected?: ProposalRejection;
}

/** Lessons an operator turned down for one tool, by kind (see `turnedDownOf` in `learn/vet.ts`). */
export interface TurnedDown {
  notes: readonly string[];
  examples: readonly string[];
  notFor: readonly string[];
  exampleCalls: readonly string[];
}

/**
 * A missed request with what routing says about its wording as an example: `pick` is the order
 * in which routing would add it (see `WhatIf.chooseExamples`), `null` when it would not, and
 * `gain` the net routing value it adds on recorded requests. Both are filled by the review's
 * evidence stage from the index ("what if"), never by a model; both are absent when no index
 * was asked (a proposer then ranks the wordings itself).
 */
export interface CoveredMiss extends MissedRequest {
  pick?: number | null;
  gain?: number;
}
