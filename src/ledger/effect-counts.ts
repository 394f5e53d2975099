import { z } from "zod";

/**
 * How an applied revision's effect is counted in one window (stored on the revision as its
 * baseline, `schema.ts`): counts only, never a caller's id.
 */

const count = z.number().int().nonnegative();

/** A target counted in one window: how often it could happen, and how often it did. Counts only. */
export const EffectCountsSchema = z.object({
  opportunities: count,
  events: count,
  /** Distinct callers the counted records came from (records with no caller count as one). */
  callers: count.optional(),
  /** The counts of the caller whose records, taken out, move the rate most (most events on a tie). */
  heaviest: z.object({ opportunities: count, events: count }).optional(),
});
export type EffectCounts = z.infer<typeof EffectCountsSchema>;
