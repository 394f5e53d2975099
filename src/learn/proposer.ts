/**
 * The proposer contract: what one tool's review sees ({@link ToolEvidence}) and what a proposer
 * may suggest ({@link Proposal}). A proposer only proposes; the vet (`learn/vet.ts`) decides
 * what is kept. Two implementations ship: `DeterministicProposer` (no model, runs offline and in
 * CI) and `ModelProposer` (any LangChain chat model).
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { ExampleSource, ToolCard } from "../ledger/schema.js";
import type { Settings } from "../settings.js";
import {
  type ArgShapeSummary,
  type ConfusedRequest,
  type FailureGroup,
  type ToolDetection,
  summarizeShapes,
} from "./detect.js";
import { routingText } from "../routing/routing-text.js";
import { type EvidenceLimits, evidenceLimits } from "./limits.js";
import type { CoveredMiss, Proposal, ProposalRejection, TurnedDown } from "./types.js";

export type { EvidenceLimits } from "./limits.js";
export type {
  CoveredMiss,
  Proposal,
  ProposalRejection,
  ProposalRejectionReason,
  ProposedExample,
  ProposedNote,
  ProposedNotFor,
} from "./types.js";

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
  /** Requests that missed the tool, each with what routing says of its wording when the index was asked. */
  misses: CoveredMiss[];
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

/** Most neighbours listed (those named by a confusion always come first). */
const MAX_NEIGHBOURS = 12;

/**
 * Assemble what one tool's review sees from its card, its detection and the other registered
 * tools. Successful calls are reduced to their masked shapes here, so no call record (and no
 * fingerprint) reaches a proposer. The misses are taken as they come: with what routing says of
 * each wording when the review's evidence stage asked the index (see {@link CoveredMiss}).
 */
export function buildToolEvidence(input: {
  card: Pick<ToolCard, "name" | "author" | "augmented" | "learned">;
  detection: Omit<ToolDetection, "misses"> & { misses: readonly CoveredMiss[] };
  /** Every registered tool (the card's own is skipped). */
  tools: readonly NeighbourTool[];
  settings?: Partial<Settings>;
  /** What an operator turned down for this tool. */
  turnedDown?: TurnedDown;
}): ToolEvidence {
  const { card, detection } = input;
  const named = new Set(detection.confusions.map((c) => c.servedBy));
  const others = input.tools.filter((t) => t.name !== card.name);
  const neighbours = [...others.filter((t) => named.has(t.name)), ...others.filter((t) => !named.has(t.name))].slice(
    0,
    Math.max(MAX_NEIGHBOURS, named.size),
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
    misses: [...detection.misses],
    confusions: detection.confusions,
    successShapes: summarizeShapes(detection.successes),
    successCount: detection.successes.length,
    neighbours: neighbours.map((n) => ({ name: n.name, description: n.description })),
    limits: evidenceLimits(input.settings),
  };
}
