/**
 * The description linter's vocabulary: the six rules of seed 002, what each asks for, and what a
 * finding on one tool says. The rules themselves are in `lint-rules.ts`; the run over every tool in
 * `lint-descriptions.ts`.
 */

/** The six rules, in seed 002's order. */
export const LINT_RULES = [
  "boundary",
  "constraints-in-prose",
  "vague-parameter",
  "no-return",
  "side-effect-late",
  "mode-switch",
] as const;
/** One of {@link LINT_RULES}. */
export type LintRule = (typeof LINT_RULES)[number];

/** What each rule asks for, in one line (for help texts and the model's instructions). */
export const LINT_RULE_SUMMARIES: Readonly<Record<LintRule, string>> = Object.freeze({
  boundary: "write the boundary: when a near neighbour exists, a sentence says when to use it instead, naming it",
  "constraints-in-prose":
    "constraints go in the schema: formats, ranges, enums and prefixes as schema keywords, not prose",
  "vague-parameter":
    "name parameters after domain concepts: not arg1, data or input, not a bare email where two kinds exist",
  "no-return": "say what the tool returns",
  "side-effect-late": "state a side effect (writes, sends, charges, deletes, irreversible) in the first clause",
  "mode-switch": "one tool, one job: no mode or action parameter switching between jobs",
});

/** One failed rule on one tool. */
export interface LintFinding {
  tool: string;
  rule: LintRule;
  /** Where: `description`, `name`, `parameter <name>`, `schema`. */
  where: string;
  /** What is wrong, quoting the words that triggered it. */
  problem: string;
  /** How to fix it. */
  fix: string;
  /** `rules`: the deterministic checks; `model`: the chat model's second opinion. */
  source: "rules" | "model";
}

/** A tool's nearest other tools by routing similarity. */
export interface Neighbour {
  tool: string;
  /** Cosine similarity of the two tools' routing vectors. */
  similarity: number;
}

/** One line per finding: `tool  rule  where: problem Fix: fix` (the `model` ones marked). */
export function findingLine(f: LintFinding): string {
  return `${f.tool}: ${f.rule}${f.source === "model" ? " (model)" : ""}: ${f.where}: ${f.problem} Fix: ${f.fix}`;
}
