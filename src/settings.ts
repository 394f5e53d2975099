import { z } from "zod";
import { InvalidInput } from "./errors.js";

/**
 * Everything an operator can store per partition: evidence thresholds, caps, retention and
 * routing defaults. One schema, validated wherever settings enter (API, CLI, stored rows).
 * Field names follow the tool-learning settings table; defaults live here and nowhere else.
 */
export const SettingsSchema = z.object({
  /** Calls of a tool before it is reviewed. */
  minCalls: z.number().int().min(0).default(3),
  /** Failed calls a usage note must rest on. */
  minFailures: z.number().int().min(1).default(2),
  /** Missed requests an example request must rest on. */
  minMisses: z.number().int().min(1).default(2),
  /** Wrongly routed requests a "Not for" line must rest on. */
  minConfusions: z.number().int().min(1).default(2),
  /** Usage notes kept on one tool. */
  maxNotes: z.number().int().min(0).default(4),
  /** Example requests kept on one tool (synthetic and learned together). */
  maxQueries: z.number().int().min(0).default(12),
  /** Example requests one review may add to one tool. */
  maxNewQueries: z.number().int().min(0).default(4),
  /** "Not for" lines kept on one tool. */
  maxAvoid: z.number().int().min(0).default(2),
  /** Most recent calls read for one tool in a review. */
  maxCallsPerTool: z.number().int().min(1).default(24),
  /** Most recent turn records (and route records) read in a review: its window over requests. */
  reviewTurns: z.number().int().min(1).default(10_000),
  /** Tools reviewed in one pass, those with the most failed calls first. */
  maxTools: z.number().int().min(1).default(8),
  /** Turns a tool is offered in, uncalled, before it is flagged `retrieved_never_called`. */
  minOffers: z.number().int().min(1).default(5),
  /** Routed turns observed before a tool never offered is flagged `never_retrieved`. */
  minTurns: z.number().int().min(1).default(20),
  /** Show the model learned example requests (hidden by default: they are retrieval keys). */
  showLearnedExamples: z.boolean().default(false),
  /** Longest note or "Not for" line, in characters. */
  maxLineLength: z.number().int().min(20).default(220),
  /** Call records kept per tool (the evaluation window); older ones are pruned. */
  retainCallsPerTool: z.number().int().min(1).default(100),
  /** Turn and route records kept per partition; older ones are pruned. */
  retainTurns: z.number().int().min(1).default(20_000),
  /** Tools routing offers for a request. */
  routingK: z.number().int().min(1).default(5),
  // Tool memory (src/memory): each call evaluated, a window per tool, guidelines.
  /** Evaluated calls kept in a tool's memory window; beyond it the oldest go first. */
  memoryWindow: z.number().int().min(1).default(100),
  /** Newest evaluated calls a guideline is written from (the recent window, and "recent" in the statistics). */
  memoryRecent: z.number().int().min(1).default(20),
  /** Evaluated calls the recent window must hold before the tool gets a guideline. */
  minEvaluatedCalls: z.number().int().min(1).default(10),
  /** A call slower than this many times its tool's median latency is evaluated as slow. */
  slowLatencyFactor: z.number().min(1).default(3),
  /** Longest guideline, its lines together (the statistics block apart), in characters. */
  maxGuidelineLength: z.number().int().min(100).default(1200),
});

/** Stored settings, every field present. */
export type Settings = z.infer<typeof SettingsSchema>;

/** A partial settings object, as passed to `configure()` or as a per-call override. */
export type SettingsInput = Partial<Settings>;

/** The defaults, in one place. */
export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze(SettingsSchema.parse({}));

/**
 * Validate settings coming from outside (API, CLI, a stored row) and fill defaults.
 * Unknown keys are refused so a typo is never silently ignored.
 * @throws InvalidInput naming each bad field.
 */
export function parseSettings(input: unknown, base: Settings = DEFAULT_SETTINGS): Settings {
  const partial = SettingsSchema.partial()
    .strict()
    .safeParse(input ?? {});
  if (!partial.success) {
    const issues = partial.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new InvalidInput(`Invalid tool-lessons settings: ${issues.join("; ")}`, {
      context: { issues },
    });
  }
  // zod 4 fills `.default()`s even under `.partial()`: keep only the fields the input names, so
  // the rest come from `base` (the stored settings), not from the defaults.
  const given = new Set(Object.keys(input ?? {}));
  const defined = Object.fromEntries(Object.entries(partial.data).filter(([k, v]) => v !== undefined && given.has(k)));
  return { ...base, ...defined };
}
