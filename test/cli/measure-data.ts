/**
 * Labelled cases for the CLI tests of `eval` and `report`: the synthetic eval requests of
 * synthetic-data.ts as cases, plus turns that need no tool.
 */
import { EVAL } from "./synthetic-data.js";

/** 24 tool cases and 3 no-tool cases. */
export const CASES: { turn: string; expect: string | string[] | null }[] = [
  ...EVAL.map((e) => ({ turn: e.query, expect: e.expect })),
  { turn: "hi there", expect: null },
  { turn: "hello, how are you", expect: [] },
  { turn: "thanks a lot", expect: null },
];

/** The cases with one more that the scripted model always fails on. */
export const CASES_WITH_FAILURE = [...CASES, { turn: "explode a hotel booking in oslo", expect: "book_hotel" }];
