/**
 * The objective the review's choice of example wordings maximises ({@link ExampleObjective}):
 * its weights, their defaults, the one parse that checks a caller's fields, and how one
 * request's change of routing is valued under it ({@link weigh}). `WhatIf` (`what-if.ts`) does
 * the routing; this says what a change is worth.
 */
import { z } from "zod";
import { InvalidInput } from "../errors.js";
import { definedOnly } from "../internal.js";

/**
 * How `WhatIf.chooseExamples` (`what-if.ts`) values a change of routing on one recorded request (set,
 * field by field, through `LessonManagerOptions.exampleObjective`).
 */
export interface ExampleObjective {
  /**
   * Value of a request whose serving tool enters (or, negative, leaves) the offered set.
   * @default 1
   */
  offeredWeight: number;
  /**
   * Value of a request whose serving tool comes to rank first (or, negative, loses rank 1).
   * @default 1
   */
  firstWeight: number;
  /**
   * Value of a request whose serving tool enters (or leaves) the best `nearDepth` tools, when
   * that is deeper than the offered set: a router offering one tool still keeps the right one
   * close, for a wider k or a retry.
   * @default 0.5
   */
  nearWeight: number;
  /**
   * Depth of the "near" set (at least the router's k).
   * @default 5
   */
  nearDepth: number;
  /**
   * Multiplier of every loss (a request whose serving tool drops out or off rank 1) against gains.
   * @default 2
   */
  lossWeight: number;
  /**
   * Least net value a pick must add.
   * @default 1
   */
  minGain: number;
  /**
   * Least net value a candidate must add to fill a free slot once no candidate adds `minGain`;
   * candidates are tried in the order given (the review gives them most representative first).
   * 0: a wording that does no harm on the recorded requests fills a slot; `Infinity`: no fill.
   * @default 0
   */
  fillGain: number;
  /**
   * Width of the soft step a score crosses a threshold by (0: a hard step). Above 0, a request
   * counts in part as it nears the threshold, so picks that widen margins are preferred.
   * @default 0.01
   */
  softness: number;
}

/** The defaults of {@link ExampleObjective}. */
export const DEFAULT_EXAMPLE_OBJECTIVE: Readonly<Required<ExampleObjective>> = Object.freeze({
  offeredWeight: 1,
  firstWeight: 1,
  nearWeight: 0.5,
  nearDepth: 5,
  lossWeight: 2,
  minGain: 1,
  fillGain: 0,
  softness: 0.01,
});

/** A number, `Infinity` allowed (a gain no candidate reaches turns its step off). */
const gainNumber = z.custom<number>((v) => typeof v === "number" && !Number.isNaN(v), {
  message: "expected a number (Infinity allowed)",
});

/** Fields of {@link ExampleObjective} as a caller may set them (checked at the manager and the CLI). */
export const ExampleObjectiveSchema = z
  .object({
    offeredWeight: z.number().min(0),
    firstWeight: z.number().min(0),
    nearWeight: z.number().min(0),
    nearDepth: z.number().int().min(1),
    lossWeight: z.number().min(0),
    minGain: gainNumber,
    fillGain: gainNumber,
    softness: z.number().min(0),
  })
  .partial()
  .strict();

/** Names of the {@link ExampleObjective} fields. */
export const EXAMPLE_OBJECTIVE_FIELDS: readonly string[] = Object.keys(ExampleObjectiveSchema.shape);

/**
 * The objective with `input`'s fields over the defaults; undefined fields are left out.
 * @throws InvalidInput for an unknown field or a value out of range.
 */
export function parseExampleObjective(input: Partial<ExampleObjective> | undefined): ExampleObjective {
  const parsed = ExampleObjectiveSchema.safeParse(definedOnly(input ?? {}));
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join(".") || "exampleObjective"}: ${i.message}`);
    throw new InvalidInput(`Invalid exampleObjective: ${detail.join("; ")}.`, {
      context: { fields: EXAMPLE_OBJECTIVE_FIELDS },
    });
  }
  return { ...DEFAULT_EXAMPLE_OBJECTIVE, ...parsed.data };
}

/** Value of one request's changes (each -1, 0 or 1), losses weighted by `lossWeight`. */
export function weigh(offered: number, first: number, near: number, o: ExampleObjective): number {
  const v = (change: number, weight: number): number => weight * (change < 0 ? o.lossWeight * change : change);
  return v(offered, o.offeredWeight) + v(first, o.firstWeight) + v(near, o.nearWeight);
}
