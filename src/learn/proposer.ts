/**
 * The proposer contract: what one tool's review sees ({@link ToolEvidence}) and what a proposer
 * may suggest ({@link Proposal}). A proposer only proposes; the vet (`learn/vet.ts`) decides
 * what is kept. Two implementations ship: `DeterministicProposer` (no model, runs offline and in
 * CI) and `ModelProposer` (any LangChain chat model).
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { ExampleSource, ToolCard } from "../ledger/schema.js";
import { DEFAULT_SETTINGS, type Settings } from "../settings.js";
import {
  type ArgShapeSummary,
  type ConfusedRequest,
  type FailureGroup,
  type MissedRequest,
  type ToolDetection,
  summarizeShapes,
} from "./detect.js";
import { definedOnly } from "../internal.js";
import { routingText } from "../index/routing-text.js";
import type { TurnedDown } from "./vet.js";

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
export const PROPOSAL_REJECTION_REASONS = [
  /** The model call itself failed (network, provider error, unsupported structured output). */
  "model_error",
  /** The reply was not JSON, or JSON wrapped in other text. */
  "reply_not_json",
  /** The reply was JSON of the wrong shape. */
  "reply_wrong_shape",
] as const;
export type ProposalRejectionReason = (typeof PROPOSAL_REJECTION_REASONS)[number];

/** A proposer's reply that could not be used, and why. */
export interface ProposalRejection {
  reason: ProposalRejectionReason;
  /** What went wrong, for a person (no argument values: the reply saw none). */
  detail: string;
}

/** What a proposer suggests for one tool. Nothing in it is stored before the vet keeps it. */
export interface Proposal {
  notes: ProposedNote[];
  examples: ProposedExample[];
  notFor: ProposedNotFor[];
  /** Set when the proposer's reply was refused as a whole (the lists are then empty). */
  rejected?: ProposalRejection;
}

/** The thresholds and caps a proposer should respect (the vet enforces them anyway). */
export type EvidenceLimits = Pick<
  Settings,
  | "minFailures"
  | "minMisses"
  | "minConfusions"
  | "maxNotes"
  | "maxQueries"
  | "maxNewQueries"
  | "maxAvoid"
  | "maxLineLength"
>;

/** A neighbour of the tool under review: another registered tool, by name and description. */
export interface NeighbourTool {
  name: string;
  description: string;
}

/**
 * Everything one tool's review sees. Argument names, masked shapes, masked messages and masked
 * request text only: never an argument value.
 */
export interface ToolEvidence {
  tool: string;
  /** The author's description (never rewritten by learning). */
  description: string;
  /** The author's argument names. */
  argNames: string[];
  /** What routing searches for this tool now (name, descriptions, example requests). */
  routingText: string;
  /** What the card has learned already (so a proposer does not repeat it). */
  current: {
    notes: string[];
    notFor: { text: string; tool: string }[];
    examples: { text: string; source: ExampleSource }[];
  };
  /** What an operator turned down for this tool (dismissed or undone): not to be proposed again. */
  turnedDown?: TurnedDown;
  /** Failed calls grouped by error class and masked message, largest first. */
  failures: FailureGroup[];
  /** Failed calls whose error says the arguments were refused. */
  refusedCount: number;
  /** Requests that missed the tool. */
  misses: MissedRequest[];
  /** Requests that went to the tool and another served. */
  confusions: ConfusedRequest[];
  /** Masked shapes of the successful calls, per argument. */
  successShapes: ArgShapeSummary[];
  /** Successful calls read. */
  successCount: number;
  /** Other registered tools: those named by a confusion first. */
  neighbours: NeighbourTool[];
  limits: EvidenceLimits;
}

/** Proposes lessons for one tool from its evidence. */
export interface Proposer {
  /** Recorded on the revision (`deterministic`, or the model's name). */
  readonly name: string;
  /**
   * Whether {@link propose} calls a model. A tool with no new calls since its last review is
   * reviewed again only by a proposer that does not (the same evidence would cost the same call);
   * one that does not looks again, since routing may have moved since (other tools' lessons) and a
   * review capped at `maxNewQueries` may have left good wordings for the next.
   * @default true (a proposer that does not say is taken to call a model)
   */
  readonly callsModel?: boolean;
  /**
   * Propose lessons for one tool. Must not throw for a bad reply: return an empty proposal with
   * `rejected` set instead.
   */
  propose(evidence: ToolEvidence, config?: RunnableConfig): Promise<Proposal>;
}

/** A proposal with nothing in it. */
export function emptyProposal(rejected?: ProposalRejection): Proposal {
  return rejected ? { notes: [], examples: [], notFor: [], rejected } : { notes: [], examples: [], notFor: [] };
}

/** Options of {@link buildToolEvidence}. */
export interface BuildToolEvidenceOptions {
  /**
   * Most neighbours listed (those named by a confusion always come first).
   * @default 12
   */
  maxNeighbours?: number;
}

/** The defaults of {@link BuildToolEvidenceOptions}. */
export const DEFAULT_BUILD_TOOL_EVIDENCE_OPTIONS: Required<BuildToolEvidenceOptions> = Object.freeze({
  maxNeighbours: 12,
});

/**
 * Assemble what one tool's review sees from its card, its detection and the other registered
 * tools. Successful calls are reduced to their masked shapes here, so no call record (and no
 * fingerprint) reaches a proposer.
 */
export function buildToolEvidence(
  input: {
    card: Pick<ToolCard, "name" | "author" | "augmented" | "learned">;
    detection: ToolDetection;
    /** Every registered tool (the card's own is skipped). */
    tools: readonly NeighbourTool[];
    settings?: Partial<EvidenceLimits>;
    /** What an operator turned down for this tool. */
    turnedDown?: TurnedDown;
  },
  options: BuildToolEvidenceOptions = {},
): ToolEvidence {
  const maxNeighbours = options.maxNeighbours ?? DEFAULT_BUILD_TOOL_EVIDENCE_OPTIONS.maxNeighbours;
  const { card, detection } = input;
  const named = new Set(detection.confusions.map((c) => c.servedBy));
  const others = input.tools.filter((t) => t.name !== card.name);
  const neighbours = [...others.filter((t) => named.has(t.name)), ...others.filter((t) => !named.has(t.name))].slice(
    0,
    Math.max(maxNeighbours, named.size),
  );
  return {
    tool: card.name,
    description: card.author.description,
    argNames: [...card.author.argNames],
    routingText: routingText(card),
    current: {
      notes: card.learned.notes.map((n) => n.text),
      notFor: card.learned.notFor.map((n) => ({ text: n.text, tool: n.tool })),
      examples: card.learned.examples.map((e) => ({ text: e.text, source: e.source })),
    },
    ...(input.turnedDown ? { turnedDown: input.turnedDown } : {}),
    failures: detection.failures,
    refusedCount: detection.refusedCount,
    misses: detection.misses,
    confusions: detection.confusions,
    successShapes: summarizeShapes(detection.successes),
    successCount: detection.successes.length,
    neighbours: neighbours.map((n) => ({ name: n.name, description: n.description })),
    limits: pickLimits({ ...DEFAULT_SETTINGS, ...definedOnly(input.settings ?? {}) }),
  };
}

function pickLimits(s: EvidenceLimits): EvidenceLimits {
  return {
    minFailures: s.minFailures,
    minMisses: s.minMisses,
    minConfusions: s.minConfusions,
    maxNotes: s.maxNotes,
    maxQueries: s.maxQueries,
    maxNewQueries: s.maxNewQueries,
    maxAvoid: s.maxAvoid,
    maxLineLength: s.maxLineLength,
  };
}
