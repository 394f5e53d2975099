import { z } from "zod";
import { EffectCountsSchema } from "./effect-counts.js";

/**
 * The rows the ledger stores. Each carries a schema version `v`; a row that does not parse is
 * skipped with a warning and counted by the ledger, never thrown into a listing.
 *
 * Privacy: no row holds a raw argument value. Arguments are kept as names, masked shapes and
 * keyed fingerprints (see `record/mask.ts`); request text is stored masked.
 */

export const SCHEMA_VERSION = 1;

/** Where a failure came from, by rule table (`record/error-class.ts`). */
export const ErrorClassSchema = z.enum([
  "validation",
  "not_found",
  "permission",
  "rate_limit",
  "timeout",
  "upstream",
  "unknown",
]);
export type ErrorClass = z.infer<typeof ErrorClassSchema>;

/** The masked shape of one argument: its name, JSON kind and format with values masked. */
export const ArgShapeSchema = z.object({
  name: z.string(),
  kind: z.enum(["string", "number", "boolean", "null", "array", "object"]),
  /** e.g. `"ORD-######"`, `"<email>"`, `"<number>"`, `"<text>"`. Never the value. */
  shape: z.string(),
});
export type ArgShape = z.infer<typeof ArgShapeSchema>;

/**
 * What is kept of a successful call's output: enough for its evaluation, never the output itself.
 * The text is masked like an error message (every argument value of the run, emails, URLs,
 * digits) and clipped; the flags are read from the whole output before masking, because masking
 * hides them (`"0 results"` becomes `"# results"`).
 */
export const OutputSummarySchema = z.object({
  /** The output's start (and its end, when long), masked; at most 400 characters. */
  text: z.string(),
  /** Length of the whole output as text, in characters. */
  chars: z.number().int().min(0),
  /** No content: blank, `null`, `[]`, `{}`, or an object whose lists are all empty. */
  empty: z.boolean(),
  /** The output says it was cut off: it ends in an ellipsis, or says "truncated" or "N more". */
  truncated: z.boolean(),
  /** The output states a count of zero ("0 results", "found 0", "total: 0"). */
  zeroCount: z.boolean(),
  /**
   * The label of text aimed at the model found in the output (`override_instructions` ...): kept
   * as data, and withheld from a model evaluator's prompt.
   */
  aimed: z.string().optional(),
});
export type OutputSummary = z.infer<typeof OutputSummarySchema>;

/** One tool call, appended once, never updated. */
export const CallRecordSchema = z.object({
  v: z.literal(SCHEMA_VERSION),
  id: z.string(),
  partition: z.string(),
  tool: z.string(),
  runId: z.string(),
  threadId: z.string().optional(),
  /** Id of the request (user turn) that led to this call; joins to turn and route records. */
  requestId: z.string().optional(),
  /** The request's text, masked like a turn's (digits, emails, URLs and every argument value of the run). */
  request: z.string().optional(),
  args: z.array(ArgShapeSchema),
  /** Keyed hashes of every argument value and of its tokens, for the vet's no-value check. */
  fingerprints: z.array(z.string()),
  outcome: z.enum(["success", "error"]),
  errorClass: ErrorClassSchema.optional(),
  /** The error message with values masked. */
  errorMessage: z.string().optional(),
  /**
   * The label of text aimed at the model found in the error (`override_instructions`,
   * `role_marker` ...): the message is kept as data, and no lesson is ever made from it.
   */
  errorAimed: z.string().optional(),
  latencyMs: z.number().optional(),
  tokens: z.number().optional(),
  /** A successful call's output, masked and clipped (absent on rows written before it was kept). */
  output: OutputSummarySchema.optional(),
  /** `callback`: seen by the handler; `tool_message`: a refusal that never reached callbacks. */
  source: z.enum(["callback", "tool_message", "api"]).default("callback"),
  /** The resolved caller, as a keyed digest (never the id): effects count distinct callers by it. */
  caller: z.string().optional(),
  at: z.number(),
});
export type CallRecord = z.infer<typeof CallRecordSchema>;

/** Fields every per-request row has (turn and route records), joined on `requestId`. */
const requestRowFields = {
  v: z.literal(SCHEMA_VERSION),
  id: z.string(),
  partition: z.string(),
  threadId: z.string().optional(),
  requestId: z.string(),
  /** The user turn, masked (digits, emails and any argument value of the run). */
  request: z.string(),
  at: z.number(),
};

/** What a run did for one request: written when the run ends (or reported by the application). */
export const TurnRecordSchema = z.object({
  ...requestRowFields,
  /**
   * The label of text aimed at the model found in the request as the user wrote it (before
   * masking): the request is kept as data and is never evidence for a lesson.
   */
  requestAimed: z.string().optional(),
  /** Tools the run called, in order, with their outcome. */
  calls: z.array(
    z.object({
      tool: z.string(),
      outcome: z.enum(["success", "error"]),
      errorClass: ErrorClassSchema.optional(),
    }),
  ),
  /**
   * The tool that served the request: the last one called successfully, or the outcome the
   * application reported. Absent when no tool served it.
   */
  servedBy: z.string().optional(),
  /** The resolved caller, as a keyed digest (never the id): effects count distinct callers by it. */
  caller: z.string().optional(),
});
export type TurnRecord = z.infer<typeof TurnRecordSchema>;

/** One tool routing offered, with its rank (1 = first) and score. */
export const OfferSchema = z.object({
  tool: z.string(),
  rank: z.number().int().min(1),
  score: z.number(),
});
export type Offer = z.infer<typeof OfferSchema>;

/** What routing offered for one request. */
export const RouteRecordSchema = z.object({
  ...requestRowFields,
  /**
   * Not written any more: a route is recorded before the run's argument values are known, so
   * the request could only be masked without them. The request's one masked text is the turn's
   * (joined on `requestId`). Older rows may still hold one.
   */
  request: z.string().optional(),
  /** Offered tools, best first. */
  offered: z.array(OfferSchema),
  /** True when every tool was sent (no routing choice): such turns count for nothing. */
  allSent: z.boolean(),
  k: z.number().int(),
  /**
   * Set when routing was skipped and every tool was sent: why, as a kind (never an error's text).
   * See `RoutingSkipped` in src/routing/router.ts.
   */
  skipped: z.enum(["embeddings_failed", "index_failed", "no_tools"]).optional(),
});
export type RouteRecord = z.infer<typeof RouteRecordSchema>;

/** Where an example request came from. */
export const ExampleSourceSchema = z.enum(["synthetic", "learned", "unknown"]);
export type ExampleSource = z.infer<typeof ExampleSourceSchema>;

export const ExampleSchema = z.object({
  text: z.string(),
  source: ExampleSourceSchema,
  /** The revision that added it (learned examples). */
  revisionId: z.string().optional(),
  addedAt: z.number(),
});
export type Example = z.infer<typeof ExampleSchema>;

export const LearnedLineSchema = z.object({ text: z.string(), revisionId: z.string() });
export type LearnedLine = z.infer<typeof LearnedLineSchema>;

/** The learned part of a card: everything a revision may change, and what undo restores. */
export const LearnedSchema = z.object({
  examples: z.array(ExampleSchema).default([]),
  notes: z.array(LearnedLineSchema).default([]),
  notFor: z.array(LearnedLineSchema.extend({ tool: z.string() })).default([]),
  exampleCall: LearnedLineSchema.nullable().default(null),
});
export type Learned = z.infer<typeof LearnedSchema>;

/** A registered tool: what the author wrote, kept apart from what was learned. */
export const ToolCardSchema = z.object({
  v: z.literal(SCHEMA_VERSION),
  partition: z.string(),
  name: z.string().min(1),
  /** The author's text and schema, never rewritten by learning. */
  author: z.object({
    description: z.string(),
    argNames: z.array(z.string()),
    /** JSON schema of the arguments, taken from the tool itself. */
    schema: z.record(z.string(), z.unknown()).nullable(),
  }),
  /** Description written at registration by augmentation, in the words people use. */
  augmented: z.object({ description: z.string(), at: z.number() }).nullable().default(null),
  /** Why augmentation was not used, when it was asked for and its reply refused. */
  augmentationRefused: z.string().optional(),
  learned: LearnedSchema,
  /** Bumped on every write; a revision remembers the version it produced (undo checks it). */
  version: z.number().int().min(1),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type ToolCard = z.infer<typeof ToolCardSchema>;

/** A piece of evidence a revision rests on. Argument names, never values. */
export const EvidenceSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("failed_call"),
    callIds: z.array(z.string()),
    errorClass: ErrorClassSchema,
    errorMessage: z.string(),
    argNames: z.array(z.string()),
  }),
  z.object({
    kind: z.literal("missed_request"),
    requestId: z.string(),
    request: z.string(),
    how: z.enum(["served_unoffered", "re_asked", "no_longer_offered"]),
  }),
  z.object({
    kind: z.literal("confused_request"),
    requestId: z.string(),
    request: z.string(),
    servedBy: z.string(),
    how: z.enum(["re_asked", "ranked_first"]),
  }),
]);
export type Evidence = z.infer<typeof EvidenceSchema>;

/** What a refusal is about: a kind of lesson (`ledger/lesson-kinds.ts`), a proposer's whole reply (`proposal`), or an augmentation reply. */
export const RefusalKindSchema = z.enum([
  "note",
  "example",
  "not_for",
  "example_call",
  "rule",
  "guideline",
  "proposal",
  "augmentation",
]);
export type RefusalKind = z.infer<typeof RefusalKindSchema>;

/**
 * Every reason anything proposed is refused, as stable machine codes: the vet's, a proposer's
 * reply and an augmentation reply share one list (a code means the same wherever it is given).
 */
export const RefusalReasonSchema = z.enum([
  // The vet (learn/vet.ts), per proposed item.
  /** Cites nothing, or cites a record that is not evidence of the right kind for this tool. */
  "no_evidence",
  /** Cites fewer records than the evidence threshold (`minFailures`, `minMisses`, `minConfusions`). */
  "below_threshold",
  /** Shares no word (stem) with one of the requests it cites. */
  "no_shared_word",
  /** Holds an argument value of a recorded call (id, name, amount, email …). */
  "contains_value",
  /** Holds text aimed at the model: instructions, role markers, chat-template tokens, tool-call syntax. */
  "aimed_at_model",
  /** Holds private data a detector finds (an email, a phone number, a card, an IBAN, a key …). */
  "contains_private_data",
  /** No word of it is an allowed word (the tool's card, tool names, common words, words two cited requests share). */
  "no_allowed_words",
  /** Too many of its words are not allowed words: more than a third would have to be masked. */
  "too_many_unknown_words",
  /** Blank. */
  "empty",
  /** Longer than its limit (`maxLineLength` for a lesson). */
  "too_long",
  /** More than one line. */
  "multi_line",
  /** The card already has as many as the cap allows (`maxNotes`, `maxAvoid`), or the review added `maxNewQueries`. */
  "cap_reached",
  /** A "Not for" line not of the shape "Not for <kind of request>; use <tool>." naming its `tool`. */
  "not_for_shape",
  /** Names a tool that is not registered. */
  "unknown_tool",
  /** A "Not for" line that names the tool it is written on. */
  "own_tool",
  /** A "Not for" line citing a request the tool it names did not serve. */
  "not_served_by_named_tool",
  /** An example request at the cap with no synthetic example left to give way. */
  "no_room",
  /** Says what the card (or another item of the same proposal) already says. */
  "already_kept",
  /** Says what an operator already turned down for this tool: a dismissed or undone revision held it. */
  "turned_down",
  /** An example the review's guard held back: with it, routing did worse on the held-out slice (the detail says how). */
  "lowers_held_out",
  // A model's reply as a whole (the model proposer, augmentation).
  /** The model call itself failed (network, provider error, unsupported structured output). */
  "model_error",
  /** The reply was not JSON, or JSON wrapped in other text. */
  "reply_not_json",
  /** The reply was JSON of the wrong shape. */
  "reply_wrong_shape",
  // Augmentation only (learn/augment.ts): its reply must be exactly one JSON object.
  /** The model replied with no text. */
  "empty_reply",
  /** The JSON was wrapped in a code fence. */
  "fenced_json",
  /** Text before or after the JSON. */
  "chatter_around_json",
  /** Not exactly the number of example requests asked for. */
  "wrong_count",
  /** Two example requests of one reply say the same. */
  "duplicate_example",
]);
export type RefusalReason = z.infer<typeof RefusalReasonSchema>;

/** Reasons stored under an older name, and the code that now means the same. */
const LEGACY_REFUSAL_REASONS: Readonly<Record<string, RefusalReason>> = Object.freeze({
  not_json: "reply_not_json",
  wrong_shape: "reply_wrong_shape",
  empty_text: "empty",
});

/** Reasons a proposer's reply as a whole is refused for. */
const PROPOSAL_REASONS: ReadonlySet<string> = new Set(["model_error", "reply_not_json", "reply_wrong_shape"]);

/**
 * A refusal row as older versions wrote it, in today's terms: a legacy reason renamed, and a
 * failed or refused proposer reply (stored as a `note` with no text) as a `proposal` refusal.
 */
function upgradeRefusal(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  const row = value as Record<string, unknown>;
  const reason = typeof row.reason === "string" ? (LEGACY_REFUSAL_REASONS[row.reason] ?? row.reason) : row.reason;
  const wholeReply =
    row.kind === "note" && row.text === "" && typeof reason === "string" && PROPOSAL_REASONS.has(reason);
  return { ...row, reason, ...(wholeReply ? { kind: "proposal" } : {}) };
}

/** Something proposed that was refused, with its reason; legacy reasons and notes are read in today's terms. */
export const RefusalSchema = z.preprocess(
  upgradeRefusal,
  z.object({
    kind: RefusalKindSchema,
    /** What was refused (withheld when it held an argument value; "" for a whole reply). */
    text: z.string(),
    reason: RefusalReasonSchema,
    detail: z.string().optional(),
  }),
);
export type Refusal = z.infer<typeof RefusalSchema>;

/** What an applied revision answered, for measuring its effect: one kind of evidence of its tool. */
export const EffectTargetSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("failure"), errorClass: ErrorClassSchema }),
  z.object({ kind: z.literal("miss") }),
  z.object({ kind: z.literal("confusion"), neighbour: z.string() }),
]);
export type EffectTarget = z.infer<typeof EffectTargetSchema>;
export { type EffectCounts, EffectCountsSchema } from "./effect-counts.js";
/** A target with its counts in the window the review read (the window before the revision). */
export const EffectBaselineSchema = z.object({ target: EffectTargetSchema, before: EffectCountsSchema });
export type EffectBaseline = z.infer<typeof EffectBaselineSchema>;

export const RevisionStatusSchema = z.enum(["proposed", "applied", "dismissed", "undone"]);
export type RevisionStatus = z.infer<typeof RevisionStatusSchema>;

/** A reviewable change to one tool card. */
export const RevisionSchema = z.object({
  v: z.literal(SCHEMA_VERSION),
  id: z.string(),
  partition: z.string(),
  tool: z.string(),
  status: RevisionStatusSchema,
  notesAdded: z.array(z.string()),
  queriesAdded: z.array(z.string()),
  avoidAdded: z.array(z.object({ text: z.string(), tool: z.string() })),
  callExample: z.string().nullable(),
  /** Examples withdrawn on apply because they pushed another tool out of routing. */
  queriesWithdrawn: z.array(z.string()).default([]),
  /** The requests (served by other tools) each withdrawn example would have displaced. */
  displaced: z.array(z.object({ query: z.string(), request: z.string(), servedBy: z.string() })).default([]),
  /** Synthetic examples that gave way to learned ones on apply; undo puts them back. */
  queriesDisplaced: z.array(z.string()).default([]),
  evidence: z.array(EvidenceSchema),
  /** For each missed request: the tool's routing rank before and after (null: not offered). */
  ranks: z.array(z.object({ request: z.string(), before: z.number().nullable(), after: z.number().nullable() })),
  refused: z.array(RefusalSchema),
  /** Which proposer wrote it (`deterministic`, or the model's name). */
  proposer: z.string(),
  approvedBy: z.string().optional(),
  /** Who dismissed or undid it. */
  closedBy: z.string().optional(),
  /** Why it was undone, when the package undid it (a lesson with no measured effect). */
  undoneBecause: z.string().optional(),
  /** What it answered, counted in the window its review read: the baseline its effect is measured against. */
  baseline: z.array(EffectBaselineSchema).optional(),
  /** Card version this revision was proposed against / produced when applied. */
  cardVersionBefore: z.number().int(),
  cardVersionAfter: z.number().int().optional(),
  /** The learned part of the card before apply, restored by undo. */
  learnedBefore: LearnedSchema.optional(),
  /** Newest call record id the review read for this tool. */
  reviewedThrough: z.string().optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type Revision = z.infer<typeof RevisionSchema>;

export const RulePrioritySchema = z.enum(["critical", "high", "normal"]);
export type RulePriority = z.infer<typeof RulePrioritySchema>;

/** Where a rule came from: a user's edict, an observation after a turn, or code / an operator. */
export const RuleSourceSchema = z.enum(["user_explicit", "post_turn", "programmatic"]);
export type RuleSource = z.infer<typeof RuleSourceSchema>;

/**
 * A tool-scoped rule. `tool` is `"*"` for an unscoped rule (a user's edict that named no tool in a
 * turn that ran none): kept, listed, and kept out of the prompt. `"*"` is never a tool's name
 * (chat model APIs allow letters, digits, `_` and `-`).
 */
export const RuleSchema = z.object({
  v: z.literal(SCHEMA_VERSION),
  id: z.string(),
  partition: z.string(),
  tool: z.string(),
  rule: z.string().min(1),
  priority: RulePrioritySchema,
  source: RuleSourceSchema,
  tags: z.array(z.string()).default([]),
  /** Who moved it into the shared scope (`promoteRule`), for a promoted rule. */
  promotedBy: z.string().optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type Rule = z.infer<typeof RuleSchema>;

/** A tool's review watermark: the newest call record id its last review read. */
export const ReviewMarkSchema = z.object({ through: z.string() });
export type ReviewMark = z.infer<typeof ReviewMarkSchema>;

// ---------------------------------------------------------------- tool memory

/** A call's evaluation score: 1 good, 0.5 executed but poor, 0 failed or badly misused. */
export const EvaluationScoreSchema = z.union([z.literal(0), z.literal(0.5), z.literal(1)]);
export type EvaluationScore = z.infer<typeof EvaluationScoreSchema>;

/** What an evaluation found wrong with a call, as stable labels (the grouping of failures). */
export const EvaluationSignalSchema = z.enum([
  /** The call failed (its error class is kept beside). */
  "error",
  /** It executed but found nothing for the request. */
  "no_results",
  /** The output warns (an unsupported value, a fallback, a deprecation). */
  "warning",
  /** The output is empty. */
  "empty",
  /** The output was cut off. */
  "truncated",
  /** Far slower than the tool's usual time. */
  "slow",
  /** Another tool fits the request better. */
  "wrong_tool",
  /** A required argument is missing. */
  "missing_argument",
  /** An argument is invalid or badly formatted. */
  "invalid_argument",
  /** The output does not answer the request. */
  "inconsistent_output",
]);
export type EvaluationSignal = z.infer<typeof EvaluationSignalSchema>;

/**
 * One evaluated call in a tool's memory window: the evaluation (summary, evaluation, score) kept
 * apart from the execution's own success flag, and what the statistics need. No text of the call
 * itself: argument shapes, never values; the summary and evaluation are written from masked data.
 */
export const EvaluatedCallSchema = z.object({
  v: z.literal(SCHEMA_VERSION),
  /** The call record's id (time-ordered: the window's order). */
  id: z.string(),
  partition: z.string(),
  tool: z.string(),
  /** When the call was made. */
  at: z.number(),
  /** The execution's own flag: the call returned without error. */
  success: z.boolean(),
  errorClass: ErrorClassSchema.optional(),
  latencyMs: z.number().optional(),
  tokens: z.number().optional(),
  /** The arguments' names and masked shapes. */
  args: z.array(ArgShapeSchema),
  /** Keyed hashes of the call's argument values (the guideline vet's no-value check). */
  fingerprints: z.array(z.string()).default([]),
  /** One sentence on what happened. */
  summary: z.string(),
  /** Why it scored what it did. */
  evaluation: z.string(),
  score: EvaluationScoreSchema,
  signals: z.array(EvaluationSignalSchema).default([]),
  /** Who evaluated it: `deterministic` or `model:<name>`. */
  evaluator: z.string(),
  /** Hash of the masked input and output: two calls with one key are duplicates. */
  key: z.string(),
  evaluatedAt: z.number(),
});
export type EvaluatedCall = z.infer<typeof EvaluatedCallSchema>;

/** Statistics of a tool's memory window, computed by code. Rates and averages are `null` with nothing to average. */
export const ToolStatsSchema = z.object({
  /** Evaluated calls in the window. */
  totalCalls: z.number().int().min(0),
  /** Of those, the recent ones (the newest `memoryRecent`). */
  recentCalls: z.number().int().min(0),
  /** Share of the window's calls that executed without error. */
  successRate: z.number().nullable(),
  recentSuccessRate: z.number().nullable(),
  /** Average evaluation score (0 to 1). */
  avgScore: z.number().nullable(),
  recentAvgScore: z.number().nullable(),
  /** Average latency of the calls that have one, in milliseconds. */
  avgLatencyMs: z.number().nullable(),
  /** Average tokens of the calls that have a count. */
  avgTokens: z.number().nullable(),
});
export type ToolStats = z.infer<typeof ToolStatsSchema>;

/**
 * Why the vet refused a line of a guideline (`memory/vet-guideline.ts`): the shared refusal codes
 * that apply to a line, meaning what they mean for any lesson, and two of its own.
 */
export const GuidelineRefusalReasonSchema = z.enum([
  "empty",
  "multi_line",
  "too_long",
  "contains_value",
  "contains_private_data",
  "aimed_at_model",
  "already_kept",
  "cap_reached",
  /** Refers to an individual call (its id, "call #3", "the last call") instead of a pattern. */
  "refers_to_call",
  /** States something as always (or never) true that not every recent call supports. */
  "overstated",
  /** Too many words outside the tool's card and the common vocabulary (see the gate's allowed words). */
  "too_many_unknown_words",
  /** No word of the tool's card or the common vocabulary at all. */
  "no_allowed_words",
]);
export type GuidelineRefusalReason = z.infer<typeof GuidelineRefusalReasonSchema>;

/** A refused line of a guideline: its text (withheld when it held an argument value) and why. */
export const GuidelineRefusalSchema = z.object({
  text: z.string(),
  reason: GuidelineRefusalReasonSchema,
  detail: z.string().optional(),
});
export type GuidelineRefusal = z.infer<typeof GuidelineRefusalSchema>;

/**
 * A tool's guideline, synthesized from its recent evaluated calls and vetted: what the tool is
 * for, what works, common issues and why, best practices; then the statistics it was written from.
 */
export const GuidelineSchema = z.object({
  /** What the tool is for and when to use it. */
  coreFunction: z.string(),
  whatWorks: z.array(z.string()),
  commonIssues: z.array(z.string()),
  /** Two or three. */
  bestPractices: z.array(z.string()),
  /** The window's statistics when it was written (the block shown after it). */
  stats: ToolStatsSchema,
  /** Newest evaluated call the synthesis read: it is re-run only when the window has a newer one. */
  through: z.string(),
  /** Recent calls it was written from. */
  calls: z.number().int().min(0),
  /** Who wrote it: `deterministic` or `model:<name>`. */
  synthesizer: z.string(),
  /** What the vet refused of the draft. */
  refused: z.array(GuidelineRefusalSchema).default([]),
  at: z.number(),
});
export type Guideline = z.infer<typeof GuidelineSchema>;

/** A tool's memory state: how far its calls were evaluated, and its guideline. */
export const ToolMemoryStateSchema = z.object({
  v: z.literal(SCHEMA_VERSION),
  partition: z.string(),
  tool: z.string(),
  /** Every call record of the tool up to this id is settled: evaluated, or dropped as a duplicate. */
  evaluatedThrough: z.string().optional(),
  guideline: GuidelineSchema.nullable().default(null),
  updatedAt: z.number(),
});
export type ToolMemoryState = z.infer<typeof ToolMemoryStateSchema>;

/** A record as handed to the ledger: it assigns `v`, `id` and `at` when they are absent. */
export type NewRecord<T extends { v: number; id: string; at: number }> = Omit<T, "v" | "id" | "at"> &
  Partial<Pick<T, "id" | "at">>;
