/**
 * The off-diagonal of a confusion matrix in plain words (seed 002's reading of it), as a pure
 * function of the matrix. Five diagnoses:
 *
 * - `duplicate_tools`: tools with the same description and argument schema (once normalized):
 *   nothing tells them apart, so no boundary sentence can. Merge them, or rename and rewrite one.
 *   Reported whether or not the cases confused them; a pair of duplicates is never a dense pair.
 * - `dense_pair`: two tools whose turns go to each other: they cannot be told apart. Rewrite both
 *   with mutual boundaries; fixing one alone moves the error to the other direction.
 * - `scattered_row`: a tool whose turns go to many other tools: its trigger cannot be told from
 *   the users' words.
 * - `null_column`: turns that needed a tool got none: the model answers from its own knowledge
 *   (a system-prompt problem, not a description problem).
 * - `null_row`: turns that needed no tool got one: it calls tools when it should chat (check for
 *   a forced tool choice).
 *
 * Thresholds count cases, not outcomes: errors are divided by the number of runs, so a case
 * repeated three times weighs as one case.
 */
import type { ConfusionMatrix } from "./confusion.js";

/** Which off-diagonal pattern a diagnosis names. */
export type DiagnosisKind = "duplicate_tools" | "dense_pair" | "scattered_row" | "null_column" | "null_row";

/** Who picked: the router alone, or a chat model with the tools bound. Diagnoses word their fix for it. */
export type SelectionMode = "router" | "chat-model";

/** One cell a diagnosis rests on. */
export interface DiagnosisCell {
  row: string | null;
  column: string | null;
  /** Outcomes in the cell (all runs). */
  count: number;
}

/** One finding about the off-diagonal. */
export interface Diagnosis {
  kind: DiagnosisKind;
  /** The tools concerned: the pair; the scattered row's tool; the tools most involved in a null row or column. */
  tools: string[];
  /** Wrong outcomes behind it (all runs). */
  errors: number;
  /** The share its threshold judged (see `THRESHOLDS` in diagnose.ts). */
  share: number;
  /** What the matrix shows, in plain words. */
  finding: string;
  /** What to do about it. */
  fix: string;
  /** The cells it rests on, largest first. */
  cells: DiagnosisCell[];
}

/** Thresholds of {@link diagnose}, fixed. Counts are in cases (outcomes divided by runs). */
interface DiagnoseThresholds {
  /** Least errors between two tools (both directions) for a dense pair. */
  minPairErrors: number;
  /** Least share of the two tools' rows those errors must make. */
  minPairShare: number;
  /** Most dense pairs reported, the densest first. */
  maxPairs: number;
  /** Least errors in a row for it to be judged scattered. */
  minRowErrors: number;
  /** Least share of the row that is wrong for it to be judged scattered. */
  minRowErrorShare: number;
  /** Least number of different wrong columns of a scattered row. */
  minScatterColumns: number;
  /** Most of a scattered row's errors one wrong column may hold (more is a pair, not a scatter). */
  maxScatterTopShare: number;
  /** Most scattered rows reported, the most wrong first. */
  maxScattered: number;
  /** Least errors in the null row, or in the null column, for its diagnosis. */
  minNullErrors: number;
  /** Least share of all errors the null column must hold. */
  minNullColumnShare: number;
  /** Least share of the null row (turns that need no tool) that must be wrong. */
  minNullRowShare: number;
}

const THRESHOLDS: Readonly<DiagnoseThresholds> = Object.freeze({
  minPairErrors: 2,
  minPairShare: 0.05,
  maxPairs: 10,
  minRowErrors: 3,
  minRowErrorShare: 0.3,
  minScatterColumns: 3,
  maxScatterTopShare: 0.5,
  maxScattered: 10,
  minNullErrors: 2,
  minNullColumnShare: 0.25,
  minNullRowShare: 0.2,
});

/** What {@link diagnose} reads besides the matrix. */
export interface DiagnoseInput {
  matrix: ConfusionMatrix;
  /** Runs per case: thresholds divide outcome counts by it. */
  runs: number;
  mode: SelectionMode;
  /** The router's minScore, when it has one (router mode): without it, it never picks "no tool". */
  minScore?: number;
  /**
   * Groups of tools with the same description and argument schema (`duplicateTools`).
   * @default [] (none)
   */
  duplicates?: readonly (readonly string[])[];
}

const pct = (x: number): string => `${Math.round(x * 100)}%`;
const name = (tool: string | null): string => (tool === null ? "no tool" : tool);

/** A group of duplicate tools as a diagnosis, with the outcomes that went from one to another. */
function duplicateDiagnosis(group: readonly string[], matrix: ConfusionMatrix): Diagnosis {
  const { labels, counts } = matrix;
  const cells: DiagnosisCell[] = [];
  let rows = 0;
  for (const row of group) {
    const i = labels.indexOf(row);
    if (i < 0) continue;
    rows += counts[i].reduce((a, b) => a + b, 0);
    for (const column of group) {
      const j = labels.indexOf(column);
      if (j >= 0 && i !== j && counts[i][j] > 0) cells.push({ row, column, count: counts[i][j] });
    }
  }
  cells.sort((x, y) => y.count - x.count || name(x.row).localeCompare(name(y.row)));
  const errors = cells.reduce((s, c) => s + c.count, 0);
  const names = group.join(group.length === 2 ? " and " : ", ");
  return {
    kind: "duplicate_tools",
    tools: [...group],
    errors,
    share: rows > 0 ? errors / rows : 0,
    finding:
      `${names} have the same description and argument schema: nothing a model or the router reads tells them apart` +
      (errors > 0 ? ` (${errors} of their ${rows} outcomes went from one to another).` : "."),
    fix:
      `Merge them into one tool; or, if they do different jobs, rename them and rewrite each description to say what only it does. ` +
      `"Not for" lines cannot separate two tools that read the same.`,
    cells,
  };
}

/**
 * Diagnoses of the off-diagonal: duplicate tools, dense pairs (never two duplicates), scattered
 * rows, then the null column and the null row.
 */
export function diagnose(input: DiagnoseInput): Diagnosis[] {
  const o = THRESHOLDS;
  const runs = Math.max(1, input.runs);
  const { labels, counts } = input.matrix;
  const rowTotal = counts.map((row) => row.reduce((a, b) => a + b, 0));
  const out: Diagnosis[] = [];
  const groupOf = new Map<string, number>();
  (input.duplicates ?? []).forEach((group, g) => {
    if (group.length < 2) return;
    for (const tool of group) groupOf.set(tool, g);
    out.push(duplicateDiagnosis(group, input.matrix));
  });
  const duplicates = (a: string, b: string): boolean => groupOf.has(a) && groupOf.get(a) === groupOf.get(b);

  const pairs: Diagnosis[] = [];
  for (let i = 0; i < labels.length; i++) {
    for (let j = i + 1; j < labels.length; j++) {
      const a = labels[i];
      const b = labels[j];
      if (a === null || b === null || duplicates(a, b)) continue;
      const ab = counts[i][j];
      const ba = counts[j][i];
      const errors = ab + ba;
      const share = errors / Math.max(1, rowTotal[i] + rowTotal[j]);
      if (errors / runs < o.minPairErrors || share < o.minPairShare) continue;
      const [first, second, firstCount, secondCount] = ab >= ba ? [a, b, ab, ba] : [b, a, ba, ab];
      pairs.push({
        kind: "dense_pair",
        tools: [first, second],
        errors,
        share,
        finding:
          `${first} and ${second} are confused: ${firstCount} of ${first}'s turns went to ${second}` +
          `${secondCount > 0 ? ` and ${secondCount} of ${second}'s to ${first}` : ` (none the other way yet)`}` +
          ` (${pct(share)} of their ${rowTotal[i] + rowTotal[j]} outcomes).`,
        fix:
          `Rewrite both as a pair: give each a boundary sentence naming the other ("Not for …; use ${second}" on ${first}, ` +
          `"Not for …; use ${first}" on ${second}). Fixing one alone tends to move the error to the other direction.`,
        cells: [
          { row: first, column: second, count: firstCount },
          { row: second, column: first, count: secondCount },
        ],
      });
    }
  }
  pairs.sort((x, y) => y.errors - x.errors || x.tools.join().localeCompare(y.tools.join()));
  out.push(...pairs.slice(0, o.maxPairs));

  const scattered: Diagnosis[] = [];
  labels.forEach((tool, i) => {
    if (tool === null || rowTotal[i] === 0) return;
    const wrong = counts[i]
      .map((count, j) => ({ row: tool, column: labels[j], count }))
      .filter((c, j) => j !== i && c.count > 0)
      .sort((x, y) => y.count - x.count || name(x.column).localeCompare(name(y.column)));
    const errors = wrong.reduce((s, c) => s + c.count, 0);
    const share = errors / rowTotal[i];
    if (errors / runs < o.minRowErrors || share < o.minRowErrorShare) return;
    if (wrong.length < o.minScatterColumns || wrong[0].count / errors > o.maxScatterTopShare) return;
    const top = wrong
      .slice(0, 4)
      .map((c) => `${name(c.column)} ${c.count}`)
      .join(", ");
    scattered.push({
      kind: "scattered_row",
      tools: [tool],
      errors,
      share,
      finding:
        `${tool}'s turns scatter: ${errors} of ${rowTotal[i]} outcomes (${pct(share)}) went to ${wrong.length} different ` +
        `answers (${top}${wrong.length > 4 ? ", …" : ""}), none taking most of them.`,
      fix:
        `Its trigger cannot be told from the users' words: say when to use it in words users use (and what it is not for), ` +
        `or consider whether it should be a top-level tool at all.`,
      cells: wrong,
    });
  });
  scattered.sort((x, y) => y.errors - x.errors || x.tools[0].localeCompare(y.tools[0]));
  out.push(...scattered.slice(0, o.maxScattered));

  const nullIndex = labels.indexOf(null);
  if (nullIndex >= 0) {
    const allErrors = counts.reduce((s, row, i) => s + row.reduce((t, c, j) => t + (i === j ? 0 : c), 0), 0);
    const columnCells = labels
      .map((row, i) => ({ row, column: null, count: i === nullIndex ? 0 : counts[i][nullIndex] }))
      .filter((c) => c.count > 0)
      .sort((x, y) => y.count - x.count || name(x.row).localeCompare(name(y.row)));
    const columnErrors = columnCells.reduce((s, c) => s + c.count, 0);
    const columnShare = allErrors > 0 ? columnErrors / allErrors : 0;
    if (columnErrors / runs >= o.minNullErrors && columnShare >= o.minNullColumnShare) {
      const tools = columnCells.slice(0, 5).map((c) => c.row as string);
      const router = input.mode === "router";
      out.push({
        kind: "null_column",
        tools,
        errors: columnErrors,
        share: columnShare,
        finding:
          `${columnErrors} outcomes that needed a tool got none (${pct(columnShare)} of all errors), most for ${tools.join(", ")}` +
          (router
            ? `: routing scored no tool at or above minScore ${input.minScore ?? "(none)"}.`
            : ": the model answered from its own knowledge instead of calling."),
        fix: router
          ? "Lower minScore, or give these tools the users' words (example requests) so they score above it."
          : "That is a system-prompt problem, not a description problem: say in the system prompt that questions about these topics are answered with the tools.",
        cells: columnCells,
      });
    }
    const rowCells = labels
      .map((column, j) => ({ row: null, column, count: j === nullIndex ? 0 : counts[nullIndex][j] }))
      .filter((c) => c.count > 0)
      .sort((x, y) => y.count - x.count || name(x.column).localeCompare(name(y.column)));
    const rowErrors = rowCells.reduce((s, c) => s + c.count, 0);
    const rowShare = rowTotal[nullIndex] > 0 ? rowErrors / rowTotal[nullIndex] : 0;
    if (rowErrors / runs >= o.minNullErrors && rowShare >= o.minNullRowShare) {
      const tools = rowCells.slice(0, 5).map((c) => c.column as string);
      const router = input.mode === "router";
      out.push({
        kind: "null_row",
        tools,
        errors: rowErrors,
        share: rowShare,
        finding:
          `${rowErrors} of ${rowTotal[nullIndex]} outcomes that needed no tool (${pct(rowShare)}) called one, most often ${tools.join(", ")}: ` +
          (router ? "routing offered a tool where the agent should chat." : "it calls tools when it should chat."),
        fix: router
          ? input.minScore === undefined
            ? "Without minScore the router always offers a tool: set one (the no-tool path), e.g. from the scores of these turns."
            : `Raise minScore (now ${input.minScore}) so these turns score below it.`
          : 'Check for a forced tool choice (tool_choice "required" or "any") left on, and say in the system prompt when to just answer.',
        cells: rowCells,
      });
    }
  }
  return out;
}
