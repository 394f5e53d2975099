/**
 * The kinds of lesson, as one table (SPEC "Lessons and their rules"): for each, the id a refusal
 * of it carries, where on the card it lives, what evidence it rests on and which setting holds its
 * threshold, which settings cap it, whether routing searches it and whether the model is shown it.
 *
 * Pure data and types, so the ledger, the index, learning and the prompt all read the same rows:
 * the vet takes its thresholds and caps from here, the proposer's evidence limits are derived from
 * the setting keys named here, and what the model is shown follows `shown`. A new kind is one row
 * here, then its rules where it is checked.
 */
import type { Settings } from "../settings.js";
import type { Evidence, Learned, RefusalKind, Revision } from "./schema.js";

/** What a kind of lesson rests on: a kind of revision evidence, or records of another kind. */
export type LessonEvidence = Evidence["kind"] | "successful_call" | "user_edict" | "evaluated_call";

/**
 * Whether the model is shown a kind of lesson: always (`yes`), never (`no`), only with the
 * `showLearnedExamples` setting (learned ones; synthetic ones never), critical and high pinned
 * and normal ones on demand (`by_priority`), or when its tool is routed (`when_routed`).
 */
export type ShownToModel = "yes" | "no" | "showLearnedExamples" | "by_priority" | "when_routed";

/**
 * Whether routing searches a kind of lesson: it is part of a tool's routing text (`yes`), not
 * (`no`), or only its normal-priority entries, through lesson retrieval (`retrieved`).
 */
export type RoutingSearches = "yes" | "no" | "retrieved";

/**
 * What happens to one more item of a kind at its card cap: refused `cap_reached` (`refuse`), an
 * invented (synthetic) one gives way, else refused `no_room` (`give_way`), it replaces the one on
 * the card (`replace`), or nothing is ever dropped (`never_dropped`: critical rules).
 */
export type AtCap = "refuse" | "give_way" | "replace" | "never_dropped";

/** One row of {@link LESSON_KINDS}. */
export interface LessonKind {
  /** The id, also the `kind` of a refusal of it. */
  readonly id: RefusalKind;
  /** What it is called in messages. */
  readonly name: string;
  /** The field of the card's `learned` part it lives in; `null` when it has rows of its own. */
  readonly field: keyof Learned | null;
  /** The revision field that carries what a revision adds of it; `null` when revisions do not. */
  readonly added: keyof Pick<Revision, "notesAdded" | "queriesAdded" | "avoidAdded" | "callExample"> | null;
  /** Who writes it: a proposer (model or deterministic), code alone, or not learning by review. */
  readonly writtenBy: "proposer" | "code" | "rules" | "memory";
  /** What it rests on (what a proposed item cites). */
  readonly evidence: LessonEvidence;
  /** The setting holding how many records of its evidence it needs; `null` when no setting does. */
  readonly threshold: "minFailures" | "minMisses" | "minConfusions" | null;
  /** How many the card keeps: a setting, a fixed number, or `null` for no cap. */
  readonly cap: "maxNotes" | "maxQueries" | "maxAvoid" | 1 | null;
  /** The setting capping how many one review adds, when one does. */
  readonly reviewCap: "maxNewQueries" | null;
  /** What one more does at the card cap. */
  readonly atCap: AtCap;
  /** Must share a word (stem) with every request it cites. */
  readonly sharesWordWithCited: boolean;
  /** Whether routing searches it. */
  readonly routingSearches: RoutingSearches;
  /** Whether the model is shown it. */
  readonly shown: ShownToModel;
}

/**
 * Every kind of lesson, in the order they are shown to the model and vetted: usage notes,
 * "Not for" lines, the example call, example requests; then rules and guidelines, which are not
 * learned by review and live in rows of their own: rules by their own stage, guidelines by tool
 * memory (`src/memory`, shown through `src/prompt/memory.ts` for the tools routed this turn).
 */
export const LESSON_KINDS = Object.freeze([
  {
    id: "note",
    name: "usage note",
    field: "notes",
    added: "notesAdded",
    writtenBy: "proposer",
    evidence: "failed_call",
    threshold: "minFailures",
    cap: "maxNotes",
    reviewCap: null,
    atCap: "refuse",
    sharesWordWithCited: false,
    routingSearches: "no",
    shown: "yes",
  },
  {
    id: "not_for",
    name: '"Not for" line',
    field: "notFor",
    added: "avoidAdded",
    writtenBy: "proposer",
    evidence: "confused_request",
    threshold: "minConfusions",
    cap: "maxAvoid",
    reviewCap: null,
    atCap: "refuse",
    sharesWordWithCited: true,
    routingSearches: "no",
    shown: "yes",
  },
  {
    id: "example_call",
    name: "example call",
    field: "exampleCall",
    added: "callExample",
    writtenBy: "code",
    evidence: "successful_call",
    // Built only for a tool with at least `minFailures` refused calls.
    threshold: "minFailures",
    cap: 1,
    reviewCap: null,
    atCap: "replace",
    sharesWordWithCited: false,
    routingSearches: "no",
    shown: "yes",
  },
  {
    id: "example",
    name: "example request",
    field: "examples",
    added: "queriesAdded",
    writtenBy: "proposer",
    evidence: "missed_request",
    threshold: "minMisses",
    cap: "maxQueries",
    reviewCap: "maxNewQueries",
    atCap: "give_way",
    sharesWordWithCited: true,
    routingSearches: "yes",
    shown: "showLearnedExamples",
  },
  {
    id: "rule",
    name: "rule",
    field: null,
    added: null,
    writtenBy: "rules",
    evidence: "user_edict",
    threshold: null,
    cap: null,
    reviewCap: null,
    atCap: "never_dropped",
    sharesWordWithCited: false,
    routingSearches: "retrieved",
    shown: "by_priority",
  },
  {
    id: "guideline",
    name: "guideline",
    field: null,
    added: null,
    writtenBy: "memory",
    evidence: "evaluated_call",
    // Its minimum is not a proposer's evidence limit: src/memory writes a guideline once the recent
    // window (`memoryRecent`) holds `minEvaluatedCalls` evaluated calls, and again only when the
    // window has calls the guideline was not written from.
    threshold: null,
    // One per tool (the tool's memory state row), replaced by each new summary; its length is
    // held to `maxLineLength` per line and `maxGuidelineLength` in all by memory/vet-guideline.ts.
    cap: 1,
    reviewCap: null,
    atCap: "replace",
    sharesWordWithCited: false,
    routingSearches: "no",
    shown: "when_routed",
  },
] as const satisfies readonly LessonKind[]);

/** The id of one kind of lesson. */
export type LessonKindId = (typeof LESSON_KINDS)[number]["id"];

/** The row of a kind that a proposer writes: one line, citing its evidence. */
export type LineKind = Extract<(typeof LESSON_KINDS)[number], { writtenBy: "proposer" }>;

/** The id of a kind a proposer writes (`note`, `not_for`, `example`). */
export type LineKindId = LineKind["id"];

/** A setting an evidence threshold is read from. */
export type ThresholdSetting = NonNullable<(typeof LESSON_KINDS)[number]["threshold"]>;

/** A setting a cap is read from (on the card or per review). */
export type CapSetting = Extract<
  (typeof LESSON_KINDS)[number]["cap"] | (typeof LESSON_KINDS)[number]["reviewCap"],
  keyof Settings
>;

/** The setting every lesson line is held to: one line of at most this many characters. */
export const LINE_LENGTH_SETTING = "maxLineLength" satisfies keyof Settings;

/** The settings a proposer must respect and the vet enforces: every threshold and cap, and the line length. */
export type LimitSetting = ThresholdSetting | CapSetting | typeof LINE_LENGTH_SETTING;

/** The keys of {@link LimitSetting}, read off the table once: thresholds, caps, then the line length. */
export const LIMIT_SETTINGS: readonly LimitSetting[] = Object.freeze([
  ...new Set<LimitSetting>(
    LESSON_KINDS.flatMap((k): LimitSetting[] =>
      [k.threshold, k.cap, k.reviewCap].filter((s): s is ThresholdSetting | CapSetting => typeof s === "string"),
    ),
  ),
  LINE_LENGTH_SETTING,
]);

/** One kind's row, by id. */
export type LessonKindOf<K extends LessonKindId> = Extract<(typeof LESSON_KINDS)[number], { id: K }>;

/** The rows of {@link LESSON_KINDS} by id. */
export const LESSON_KIND: { readonly [K in LessonKindId]: LessonKindOf<K> } = Object.freeze(
  Object.fromEntries(LESSON_KINDS.map((k) => [k.id, k])) as { [K in LessonKindId]: LessonKindOf<K> },
);
