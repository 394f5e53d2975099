import { describe, expect, it } from "vitest";
import { LESSON_KIND, LESSON_KINDS, LIMIT_SETTINGS } from "../../src/ledger/lesson-kinds.js";
import { LearnedSchema, RefusalKindSchema, RevisionSchema } from "../../src/ledger/schema.js";
import { DEFAULT_SETTINGS } from "../../src/settings.js";

describe("the lesson-kinds table", () => {
  it("holds the SPEC's table: evidence, threshold, caps, routing and what the model is shown", () => {
    const rows = LESSON_KINDS.map((k) => [
      k.id,
      k.field,
      k.evidence,
      k.threshold,
      k.cap,
      k.reviewCap,
      k.routingSearches,
      k.shown,
    ]);
    expect(rows).toEqual([
      ["note", "notes", "failed_call", "minFailures", "maxNotes", null, "no", "yes"],
      ["not_for", "notFor", "confused_request", "minConfusions", "maxAvoid", null, "no", "yes"],
      ["example_call", "exampleCall", "successful_call", "minFailures", 1, null, "no", "yes"],
      [
        "example",
        "examples",
        "missed_request",
        "minMisses",
        "maxQueries",
        "maxNewQueries",
        "yes",
        "showLearnedExamples",
      ],
      ["rule", null, "user_edict", null, null, null, "retrieved", "by_priority"],
      ["guideline", null, "evaluated_call", null, 1, null, "no", "when_routed"],
    ]);
  });

  it("names only real settings, card fields, revision fields and refusal kinds", () => {
    const learned = Object.keys(LearnedSchema.shape);
    const revision = Object.keys(RevisionSchema.shape);
    for (const k of LESSON_KINDS) {
      expect(RefusalKindSchema.options).toContain(k.id);
      if (k.field !== null) expect(learned).toContain(k.field);
      if (k.added !== null) expect(revision).toContain(k.added);
      for (const s of [k.threshold, k.cap, k.reviewCap])
        if (typeof s === "string") expect(DEFAULT_SETTINGS).toHaveProperty(s);
    }
    expect(LESSON_KIND.example.reviewCap).toBe("maxNewQueries");
  });

  it("derives the evidence limits from its settings, plus the line length", () => {
    expect([...LIMIT_SETTINGS].sort()).toEqual(
      [
        "maxAvoid",
        "maxLineLength",
        "maxNewQueries",
        "maxNotes",
        "maxQueries",
        "minConfusions",
        "minFailures",
        "minMisses",
      ].sort(),
    );
  });

  it("has the kinds a proposer writes in the order the vet reads them", () => {
    expect(LESSON_KINDS.filter((k) => k.writtenBy === "proposer").map((k) => k.id)).toEqual([
      "note",
      "not_for",
      "example",
    ]);
  });
});
