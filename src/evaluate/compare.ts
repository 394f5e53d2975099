/**
 * Two selection runs side by side (before and after a change of descriptions or lessons, or two
 * models), as a pure function: accuracy and each tool's recall before and after, and whether the
 * change is more than the repeats' noise.
 *
 * Noise is what the repeats of one run disagree about: the spread (largest minus smallest) of a
 * figure over the runs of each side, the larger of the two. A change counts only when it is larger
 * than that noise and the tool has at least {@link MIN_CASES} cases: a router is deterministic (no noise),
 * but one case of five still moves recall by 20 points and says nothing. Cases are matched by
 * their turn, so the two runs may come from files in another order.
 */
import { isCorrect, pickOf } from "./confusion.js";
import type { SelectionReport } from "./harness.js";

/** Least cases a tool needs on both sides for its change to be judged. */
const MIN_CASES = 10;

/** How a change compares with the noise. */
export type ChangeVerdict = "better" | "worse" | "within_noise" | "too_few_cases";

/** One figure before and after. */
export interface ComparedFigure {
  before: number | null;
  after: number | null;
  /** `after - before`; null when either is. */
  change: number | null;
  /** Spread of the figure over the repeats, the larger side's. */
  noise: number;
  verdict: ChangeVerdict;
}

/** One tool's recall before and after. */
export interface ComparedTool extends ComparedFigure {
  /** The tool, or `null` for the turns that need no tool. */
  tool: string | null;
  /** Cases expecting it, on the side with fewer. */
  cases: number;
}

/** What {@link compareRuns} returns. */
export interface Comparison {
  before: { label: string; runs: number; cases: number };
  after: { label: string; runs: number; cases: number };
  accuracy: ComparedFigure;
  /**
   * Recall@k of routing's ranking before and after, for each k both runs have (router runs: one
   * run, no noise; judged like accuracy). Empty when either side did not rank.
   */
  recallAtK: (ComparedFigure & { k: number })[];
  /** The "no tool" AUROC before and after, when both runs have one. */
  noToolAuroc?: { before: number; after: number };
  /** Every tool expected on either side, the largest change first (judged ones before the rest). */
  perTool: ComparedTool[];
  /** Cases matched by turn, and how many went from wrong to right and back (by majority of runs). */
  cases: { matched: number; onlyBefore: number; onlyAfter: number; fixed: number; broken: number };
}

const spread = (values: readonly (number | null)[]): number => {
  const xs = values.filter((v): v is number => v !== null);
  return xs.length < 2 ? 0 : Math.max(...xs) - Math.min(...xs);
};

const EPSILON = 1e-12;

function judge(before: number | null, after: number | null, noise: number, enough: boolean): ComparedFigure {
  const change = before === null || after === null ? null : after - before;
  let verdict: ChangeVerdict;
  if (!enough || change === null) verdict = "too_few_cases";
  else if (Math.abs(change) <= noise + EPSILON) verdict = "within_noise";
  else verdict = change > 0 ? "better" : "worse";
  return { before, after, change, noise, verdict };
}

/** A case's key: its turn, with a counter for repeats of one turn. */
function keyed(report: SelectionReport): Map<string, SelectionReport["cases"][number]> {
  const seen = new Map<string, number>();
  const out = new Map<string, SelectionReport["cases"][number]>();
  for (const c of report.cases) {
    const n = seen.get(c.turn) ?? 0;
    seen.set(c.turn, n + 1);
    out.set(`${n}\u0000${c.turn}`, c);
  }
  return out;
}

/** Whether most of a case's counted runs were right (undefined when none was counted). */
function mostlyRight(c: SelectionReport["cases"][number]): boolean | undefined {
  const picks = c.outcomes.map(pickOf).filter((p): p is string | null => p !== undefined);
  if (picks.length === 0) return undefined;
  return picks.filter((p) => isCorrect(c.expect, p)).length * 2 > picks.length;
}

/** Compare two runs (see the module comment). */
export function compareRuns(before: SelectionReport, after: SelectionReport): Comparison {
  const accuracyNoise = Math.max(spread(before.accuracy.perRun), spread(after.accuracy.perRun));
  const accuracy = judge(before.accuracy.accuracy, after.accuracy.accuracy, accuracyNoise, true);

  const tools = new Map<
    string | null,
    { b?: SelectionReport["perTool"][number]; a?: SelectionReport["perTool"][number] }
  >();
  for (const t of before.perTool) if (t.cases > 0) tools.set(t.tool, { b: t });
  for (const t of after.perTool) if (t.cases > 0) tools.set(t.tool, { ...tools.get(t.tool), a: t });
  const perTool: ComparedTool[] = [...tools.entries()].map(([tool, { b, a }]) => {
    const cases = Math.min(b?.cases ?? 0, a?.cases ?? 0);
    const noise = Math.max(spread(b?.recallPerRun ?? []), spread(a?.recallPerRun ?? []));
    return { tool, cases, ...judge(b?.recall ?? null, a?.recall ?? null, noise, cases >= MIN_CASES) };
  });
  const judged = (t: ComparedTool): number => (t.verdict === "too_few_cases" ? 1 : 0);
  perTool.sort(
    (x, y) =>
      judged(x) - judged(y) ||
      Math.abs(y.change ?? 0) - Math.abs(x.change ?? 0) ||
      String(x.tool).localeCompare(String(y.tool)),
  );

  const afterRecall = new Map((after.ranking?.recallAtK ?? []).map((r) => [r.k, r.recall]));
  const recallAtK = (before.ranking?.recallAtK ?? [])
    .filter((r) => afterRecall.has(r.k))
    .map((r) => ({ k: r.k, ...judge(r.recall, afterRecall.get(r.k)!, 0, true) }));
  const noToolAuroc =
    before.noTool && after.noTool && Number.isFinite(before.noTool.auroc) && Number.isFinite(after.noTool.auroc)
      ? { before: before.noTool.auroc, after: after.noTool.auroc }
      : undefined;

  const b = keyed(before);
  const a = keyed(after);
  let matched = 0;
  let fixed = 0;
  let broken = 0;
  for (const [key, cb] of b) {
    const ca = a.get(key);
    if (!ca) continue;
    matched += 1;
    const was = mostlyRight(cb);
    const is = mostlyRight(ca);
    if (was === false && is === true) fixed += 1;
    if (was === true && is === false) broken += 1;
  }
  return {
    before: { label: before.label, runs: before.runs, cases: before.cases.length },
    after: { label: after.label, runs: after.runs, cases: after.cases.length },
    accuracy,
    recallAtK,
    ...(noToolAuroc ? { noToolAuroc } : {}),
    perTool,
    cases: { matched, onlyBefore: b.size - matched, onlyAfter: a.size - matched, fixed, broken },
  };
}
