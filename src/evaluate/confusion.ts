/**
 * What a selection run's outcomes add up to, as pure functions: accuracy, the confusion matrix
 * with its "no tool" row and column, per-tool precision and recall, and agreement across repeats.
 *
 * Counting: every outcome that is not an error counts once (a case run 3 times counts 3 times).
 * An outcome's row is the tool the case expected: the picked tool when it is one of `expect`
 * (a case with two right answers lands on the diagonal of the one picked), else the first tool of
 * `expect`; `null` (no tool should fire) for a case that expects none. Its column is the tool
 * picked, or `null` when no tool was called.
 */

/** What one run of one case gave: the first tool called (`null`: none), or the error it ended in. */
export type Outcome = { tool: string | null } | { error: string };

/** One case and what each of its runs gave, in run order. */
export interface CaseResult {
  /** The case's id (its `id` field, or `line N`). */
  id: string;
  /** The user's words. */
  turn: string;
  /** Tools any one of which is right; empty: no tool should fire. */
  expect: string[];
  /** 1-based line of the case file, when known. */
  line?: number;
  /** One outcome per run. */
  outcomes: Outcome[];
  /** The case's own candidate list, when it was routed among it. */
  candidates?: string[];
  /** The case's fold, when it has one. */
  fold?: number;
  /** The case's other scalar fields, as text, for breakdowns. */
  fields?: Record<string, string>;
  /** The tools the selector ranked for it, best first (the router's, first run; for recall@k). */
  ranked?: string[];
}

/** Confusion counts: `counts[row][column]`, rows the expected tool, columns the picked one. */
export interface ConfusionMatrix {
  /** Row and column labels, in one order: tools by name (ignoring case), then `null` (no tool) last. */
  labels: (string | null)[];
  /** `counts[i][j]`: outcomes expected `labels[i]` that picked `labels[j]`. */
  counts: number[][];
}

/** Accuracy over the counted outcomes. */
export interface AccuracyFigures {
  /** `correct / counted`; null when nothing was counted. */
  accuracy: number | null;
  /** Outcomes that picked a right tool (or none, when none was expected). */
  correct: number;
  /** Outcomes counted (errors left out). */
  counted: number;
  /** Outcomes that ended in an error: reported, never counted as a miss. */
  errored: number;
  /** Accuracy of each run on its own, in run order (null for a run with nothing counted). */
  perRun: (number | null)[];
}

/** Precision and recall of one row/column label. */
export interface ToolScore {
  /** The tool, or `null` for "no tool". */
  tool: string | null;
  /** Cases whose `expect` names this tool (for `null`: cases that expect none). */
  cases: number;
  /** Outcomes in this tool's row. */
  expected: number;
  /** Outcomes in this tool's column. */
  picked: number;
  /** Outcomes on the diagonal. */
  correct: number;
  /** `correct / picked`; null when never picked. */
  precision: number | null;
  /** `correct / expected`; null when never expected. */
  recall: number | null;
  /** Recall of each run on its own (null where the run has nothing in this row). */
  recallPerRun: (number | null)[];
}

/** A case whose runs did not all pick the same. */
export interface Disagreement {
  id: string;
  turn: string;
  expect: string[];
  /** The counted picks, in run order. */
  picks: (string | null)[];
}

/** How often the repeats of a case agree. */
export interface Agreement {
  /** Cases with at least two counted runs. */
  cases: number;
  /** Of those, cases whose counted runs all picked the same. */
  unanimous: number;
  /** `unanimous / cases`; null when no case ran twice. */
  share: number | null;
  /** Mean over those cases of the share of runs that picked the case's most frequent answer. */
  meanModalShare: number | null;
  /** Every case that disagreed, in case order. */
  disagreements: Disagreement[];
}

/** The picked tool of an outcome, or undefined for an error. */
export function pickOf(outcome: Outcome): string | null | undefined {
  return "error" in outcome ? undefined : outcome.tool;
}

/** Whether a pick is right for a case: one of `expect`, or no tool when none is expected. */
export function isCorrect(expect: readonly string[], pick: string | null): boolean {
  return expect.length === 0 ? pick === null : pick !== null && expect.includes(pick);
}

/** The matrix row of a counted pick (see the module comment). */
export function rowOf(expect: readonly string[], pick: string | null): string | null {
  if (expect.length === 0) return null;
  return pick !== null && expect.includes(pick) ? pick : expect[0];
}

/** Tools by name ignoring case (then exactly, so the order is total), `null` last. */
const byLabel = (a: string | null, b: string | null): number => {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x !== y) return x < y ? -1 : 1;
  return a < b ? -1 : 1;
};

/** The number of runs: the most outcomes any case has. */
export function runCount(cases: readonly CaseResult[]): number {
  return cases.reduce((max, c) => Math.max(max, c.outcomes.length), 0);
}

/**
 * The confusion matrix of the counted outcomes. Labels are every tool that is expected or picked,
 * by name, plus `null` (always present, so the "no tool" row and column can be read even when
 * empty).
 */
export function confusionMatrix(cases: readonly CaseResult[]): ConfusionMatrix {
  const cells = new Map<string | null, Map<string | null, number>>();
  const labels = new Set<string | null>([null]);
  for (const c of cases) {
    for (const outcome of c.outcomes) {
      const pick = pickOf(outcome);
      if (pick === undefined) continue;
      const row = rowOf(c.expect, pick);
      labels.add(row);
      labels.add(pick);
      const line = cells.get(row) ?? new Map<string | null, number>();
      line.set(pick, (line.get(pick) ?? 0) + 1);
      cells.set(row, line);
    }
  }
  const ordered = [...labels].sort(byLabel);
  return {
    labels: ordered,
    counts: ordered.map((row) => ordered.map((col) => cells.get(row)?.get(col) ?? 0)),
  };
}

/** A matrix cell by labels (0 for labels it does not have). */
export function cell(matrix: ConfusionMatrix, row: string | null, column: string | null): number {
  const i = matrix.labels.indexOf(row);
  const j = matrix.labels.indexOf(column);
  return i < 0 || j < 0 ? 0 : matrix.counts[i][j];
}

/** Accuracy overall and per run. */
export function accuracyOf(cases: readonly CaseResult[]): AccuracyFigures {
  const runs = runCount(cases);
  const perRunCorrect = new Array<number>(runs).fill(0);
  const perRunCounted = new Array<number>(runs).fill(0);
  let errored = 0;
  for (const c of cases) {
    c.outcomes.forEach((outcome, r) => {
      const pick = pickOf(outcome);
      if (pick === undefined) {
        errored += 1;
        return;
      }
      perRunCounted[r] += 1;
      if (isCorrect(c.expect, pick)) perRunCorrect[r] += 1;
    });
  }
  const correct = perRunCorrect.reduce((a, b) => a + b, 0);
  const counted = perRunCounted.reduce((a, b) => a + b, 0);
  return {
    accuracy: counted > 0 ? correct / counted : null,
    correct,
    counted,
    errored,
    perRun: perRunCounted.map((n, r) => (n > 0 ? perRunCorrect[r] / n : null)),
  };
}

/** Precision and recall of every label of the matrix, in its order. */
export function toolScores(
  cases: readonly CaseResult[],
  matrix: ConfusionMatrix = confusionMatrix(cases),
): ToolScore[] {
  const runs = runCount(cases);
  const caseCounts = new Map<string | null, number>();
  const rowByRun = new Map<string | null, { expected: number[]; correct: number[] }>();
  for (const c of cases) {
    for (const tool of c.expect.length === 0 ? [null] : c.expect) caseCounts.set(tool, (caseCounts.get(tool) ?? 0) + 1);
    c.outcomes.forEach((outcome, r) => {
      const pick = pickOf(outcome);
      if (pick === undefined) return;
      const row = rowOf(c.expect, pick);
      const entry = rowByRun.get(row) ?? {
        expected: new Array<number>(runs).fill(0),
        correct: new Array<number>(runs).fill(0),
      };
      entry.expected[r] += 1;
      if (row === pick) entry.correct[r] += 1;
      rowByRun.set(row, entry);
    });
  }
  return matrix.labels.map((tool, i) => {
    const expected = matrix.counts[i].reduce((a, b) => a + b, 0);
    const picked = matrix.counts.reduce((sum, row) => sum + row[i], 0);
    const correct = matrix.counts[i][i];
    const byRun = rowByRun.get(tool);
    return {
      tool,
      cases: caseCounts.get(tool) ?? 0,
      expected,
      picked,
      correct,
      precision: picked > 0 ? correct / picked : null,
      recall: expected > 0 ? correct / expected : null,
      recallPerRun: Array.from({ length: runs }, (_, r) =>
        byRun && byRun.expected[r] > 0 ? byRun.correct[r] / byRun.expected[r] : null,
      ),
    };
  });
}

/** Agreement across the repeats of each case (errors left out). */
export function agreementOf(cases: readonly CaseResult[]): Agreement {
  let counted = 0;
  let unanimous = 0;
  let modalSum = 0;
  const disagreements: Disagreement[] = [];
  for (const c of cases) {
    const picks = c.outcomes.map(pickOf).filter((p): p is string | null => p !== undefined);
    if (picks.length < 2) continue;
    counted += 1;
    const tally = new Map<string | null, number>();
    for (const p of picks) tally.set(p, (tally.get(p) ?? 0) + 1);
    modalSum += Math.max(...tally.values()) / picks.length;
    if (tally.size === 1) unanimous += 1;
    else disagreements.push({ id: c.id, turn: c.turn, expect: c.expect, picks });
  }
  return {
    cases: counted,
    unanimous,
    share: counted > 0 ? unanimous / counted : null,
    meanModalShare: counted > 0 ? modalSum / counted : null,
    disagreements,
  };
}
