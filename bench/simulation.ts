/**
 * The learning simulation on MetaTool: traffic folds replayed as routed turns served by the
 * labelled tool, review + apply after each of 4 slices (deterministic proposer), eval on one fold
 * (never learned from), and the references for choosing examples (issue 21). Run alone with
 * `npx tsx bench/simulation.ts`.
 */
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { InMemoryStore } from "@langchain/langgraph";
import { auroc, hitAtK, mean, ndcgAtK } from "../src/evaluate/metrics.js";
import { seededRandom } from "../src/internal.js";
import { WhatIf } from "../src/learn/what-if.js";
import { DEFAULT_EXAMPLE_OBJECTIVE } from "../src/learn/example-objective.js";
import { withExamples } from "../src/learn/card-examples.js";
import { DEFAULT_SETTINGS } from "../src/settings.js";
import { type LabelledRequest, simulate, type SimulationReport, type ToolSpec } from "../src/evaluate/simulate.js";
import { ToolIndex, type ToolIndexOptions } from "../src/routing/tool-index.js";
import { registerTools } from "../src/learn/register.js";
import { Ledger } from "../src/ledger/ledger.js";
import { cardWords } from "../src/ledger/cards.js";
import { gateLesson } from "../src/learn/vet-lines.js";
import { maskRequest } from "../src/text/mask.js";
import { intersects } from "../src/text/tokenize.js";
import { readJsonl as readJsonlFile } from "./jsonl.js";

const dataDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../shared/data/metatool");

const readJsonl = <T>(file: string): T[] => readJsonlFile<T>(path.join(dataDir, file));

export async function runMetaToolSimulation(
  options: { shuffleSeed?: number; k?: number; cycles?: number; center?: number; evalFold?: number } = {},
): Promise<SimulationReport & { seconds: number }> {
  const tools = readJsonl<ToolSpec>("tools.jsonl");
  const queries = readJsonl<LabelledRequest & { fold: number }>("queries.jsonl");
  const evalFold = options.evalFold ?? 1;
  const t0 = performance.now();
  const report = await simulate({
    tools,
    traffic: queries.filter((q) => q.fold !== evalFold),
    eval: queries.filter((q) => q.fold === evalFold),
    k: options.k ?? 5,
    cycles: options.cycles ?? 4,
    shuffleSeed: options.shuffleSeed,
    index: options.center === undefined ? undefined : { examples: { center: options.center } },
  });
  return { ...report, seconds: (performance.now() - t0) / 1000 };
}

/** Routing quality of fold 1 with the given examples put on each tool's card directly (no learning rules). */
export interface ReferenceRow {
  top1: number;
  recall5: number;
  ndcg5: number;
  /** AUROC of the best score: fold-1 requests with a label against MetaTool's `source: negative` ones. */
  noToolAuroc: number;
}

type Folded = LabelledRequest & { fold: number; source?: string };

/** A traffic request's text (masked when gated) and the tool that served it. */
type ServedText = { request: string; servedBy: string };

/** What a reference's `pick` is given for one tool. */
interface PickInput {
  tool: string;
  /** The tool's traffic requests. */
  own: readonly string[];
  /** Those routing by description alone misses (through the gate when gated). */
  missed: readonly string[];
  /** Every traffic request with its serving tool, in file order. */
  traffic: readonly ServedText[];
  whatIf: WhatIf;
}

/**
 * Fold 1 routed after `pick` chose each tool's examples from its traffic requests (folds other
 * than `evalFold`), given also the ones routing by description alone misses (not in the first 5).
 */
export async function referenceRow(
  pick: (input: PickInput) => Promise<readonly string[]> | readonly string[],
  options: {
    evalFold?: number;
    examples?: ToolIndexOptions["examples"];
    /**
     * Give `pick` the texts as the learning loop sees them: every request masked as the recorder
     * masks it, and the missed ones through the vet's gate (`gateLesson`: a wording it refuses is
     * left out, words it does not allow become `<word>`), citing the tool's missed requests.
     */
    gated?: boolean;
    /**
     * Hold the reference to the rules apply enforces as well: no example longer than the
     * `maxLineLength` setting (220), and, with every tool's examples in place, each example that
     * would push another tool out of the first 5 for a traffic request that tool served withdrawn
     * (`WhatIf.displaces`, as apply re-checks).
     */
    rules?: boolean;
  } = {},
): Promise<ReferenceRow> {
  const evalFold = options.evalFold ?? 1;
  const tools = readJsonl<ToolSpec>("tools.jsonl");
  const queries = readJsonl<Folded>("queries.jsonl");
  const ledger = new Ledger(new InMemoryStore());
  await registerTools(
    ledger,
    tools.map((t) => ({ name: t.name, description: t.description })),
    { partition: "p" },
  );
  const bare = new ToolIndex({ ledger, examples: options.examples });
  const traffic = queries.filter((q) => q.fold !== evalFold && q.expect.length > 0);
  const texts: ServedText[] = traffic.map((q) => ({
    request: options.gated ? maskRequest(q.query) : q.query,
    servedBy: q.expect[0],
  }));
  const missed = new Map<string, string[]>();
  for (const q of traffic) {
    const offered = (await bare.route("p", q.query, { k: 5 })).map((o) => o.tool);
    if (!offered.includes(q.expect[0])) missed.set(q.expect[0], [...(missed.get(q.expect[0]) ?? []), q.query]);
  }
  const cards = await ledger.listCards("p");
  const whatIf = new WhatIf(bare, "p", 5, new Map(cards.map((c) => [c.name, c])));
  const names = cards.map((c) => c.name);
  for (const card of cards) {
    const own = texts.filter((t) => t.servedBy === card.name).map((t) => t.request);
    let seen = missed.get(card.name) ?? [];
    if (options.gated) {
      const masked = seen.map((q) => maskRequest(q));
      const cited = masked.map((text, i) => ({ id: String(i), text }));
      const ctx = { tool: card.name, card: cardWords(card), registeredTools: names, containsValue: () => false };
      seen = masked.flatMap((text) => {
        const gated = gateLesson("example", text, ctx, cited);
        return gated.refusal ? [] : [gated.text];
      });
    }
    if (options.rules) seen = seen.filter((text) => text.length <= DEFAULT_SETTINGS.maxLineLength);
    const picked = await pick({ tool: card.name, own, missed: seen, traffic: texts, whatIf });
    if (picked.length === 0) continue;
    await ledger.putCard({
      ...card,
      learned: {
        ...card.learned,
        examples: [...new Set(picked)].map((text) => ({ text, source: "learned" as const, addedAt: 1 })),
      },
    });
  }
  if (options.rules) await withdrawDisplacing(ledger, texts, options.examples);
  const index = new ToolIndex({ ledger, examples: options.examples });
  const top1: number[] = [];
  const recall5: number[] = [];
  const ndcg5: number[] = [];
  const served: number[] = [];
  const none: number[] = [];
  for (const q of queries.filter((x) => x.fold === evalFold)) {
    const offers = await index.route("p", q.query, { k: 5 });
    const best = offers[0]?.score ?? Number.NEGATIVE_INFINITY;
    if (q.expect.length === 0) {
      none.push(best);
      continue;
    }
    served.push(best);
    const ranked = offers.map((o) => o.tool);
    top1.push(hitAtK(ranked, q.expect, 1));
    recall5.push(hitAtK(ranked, q.expect, 5));
    ndcg5.push(ndcgAtK(ranked, q.expect, 5));
  }
  return { top1: mean(top1), recall5: mean(recall5), ndcg5: mean(ndcg5), noToolAuroc: auroc(served, none) };
}

/**
 * Apply's routing re-check over the reference's cards: with every tool's examples in place, each
 * tool's examples in turn (with the ones it keeps before) are withdrawn when they push another
 * tool out of the first 5 for a traffic request that tool served.
 */
async function withdrawDisplacing(
  ledger: Ledger,
  served: readonly ServedText[],
  examples: ToolIndexOptions["examples"],
): Promise<void> {
  const index = new ToolIndex({ ledger, examples });
  const cards = await ledger.listCards("p");
  const whatIf = new WhatIf(index, "p", 5, new Map(cards.map((c) => [c.name, c])));
  for (const card of cards) {
    const texts = card.learned.examples.map((e) => e.text);
    const bare = withExamples(card, [], texts);
    const kept: string[] = [];
    for (const text of texts) {
      const variant = await whatIf.variant(bare, [...kept, text]);
      if ((await whatIf.displaces(card.name, text, variant, served)) === null) kept.push(text);
    }
    if (kept.length < texts.length) await ledger.putCard(withExamples(bare, kept));
  }
}

/** `n` distinct texts of `from` drawn with a seeded generator (all of them when there are fewer). */
function drawn(from: readonly string[], n: number, next: () => number): string[] {
  const distinct = [...new Set(from)];
  const pick = new Set<string>();
  while (pick.size < Math.min(n, distinct.length)) pick.add(distinct[Math.floor(next() * distinct.length)]);
  return [...pick];
}

/**
 * The chance reference: each tool given `n` of its real traffic requests (folds 2-4) picked at
 * random (seeded) as example requests, no learning rules, then fold 1 routed.
 */
export async function randomExamplesReference(
  n = 12,
  examples?: ToolIndexOptions["examples"],
  options: { seed?: number; missedOnly?: boolean } = {},
): Promise<ReferenceRow> {
  const next = seededRandom(options.seed ?? 7);
  return referenceRow(({ own, missed }) => drawn(options.missedOnly ? missed : own, n, next), { examples });
}

/** Up to `n` medoids of a tool's distinct missed requests over its traffic (`WhatIf.medoids`). */
async function medoidsOf(input: PickInput, n: number): Promise<{ requestId: string; request: string }[]> {
  const distinct = [...new Set(input.missed)].map((request, i) => ({ requestId: `m${i}`, request }));
  return input.whatIf.medoids(
    distinct,
    input.own.map((request) => ({ request })),
    [],
    n,
  );
}

/** Up to 12 medoids of a tool's missed requests: the reference the loop is held to. */
async function medoidsOfMissed(input: PickInput): Promise<string[]> {
  return (await medoidsOf(input, 12)).map((c) => c.request);
}

/**
 * The exact pass over a tool's missed requests, once: its 24 medoids valued by routing's what-if
 * (`WhatIf.chooseExamples`, ≤ 12, the default objective) on the tool's own traffic and the
 * newest 600 of other tools' traffic requests sharing a word with a candidate.
 */
async function greedyOfMissed(input: PickInput): Promise<string[]> {
  const { tool, own, traffic, whatIf } = input;
  const candidates = await medoidsOf(input, 24);
  if (candidates.length === 0) return [];
  const words = new Set(candidates.flatMap((c) => [...whatIf.words(c.request)]));
  const others = traffic
    .filter((t) => t.servedBy !== tool && intersects(words, whatIf.words(t.request)))
    .slice(-600)
    .map((t, i) => ({ requestId: `o${i}`, ...t }));
  const targets = own.map((request) => ({ request }));
  const chosen = await whatIf.chooseExamples(tool, candidates, { own: targets, others }, 12, DEFAULT_EXAMPLE_OBJECTIVE);
  return chosen.map((c) => c.request);
}

const pct = (x: number): string => x.toFixed(3);

/** The targets for the documented command (and eval folds 2 and 3). */
const TARGETS = { top1: 0.69, recall5: 0.885, maxExamples: 12, maxNetLoss: 2, noToolAuroc: 0.9 };

/** Markdown section: before/after routing on MetaTool, eval folds 1-3, and the example-choice references. */
export async function benchSimulation(): Promise<string> {
  const runs = [
    { label: "eval fold 1, traffic 2-4 (the command above)", report: await runMetaToolSimulation() },
    { label: "eval fold 2, traffic 1, 3, 4", report: await runMetaToolSimulation({ evalFold: 2 }) },
    { label: "eval fold 3, traffic 1, 2, 4", report: await runMetaToolSimulation({ evalFold: 3 }) },
    { label: "eval fold 1, `--shuffle 1`", report: await runMetaToolSimulation({ shuffleSeed: 1 }) },
  ];
  const mark = (ok: boolean): string => (ok ? "yes" : "no");
  const verdicts = runs.map(({ label, report: r }) => {
    const met = {
      top1: r.after.top1 >= TARGETS.top1,
      recall: r.after["recall@5"] >= TARGETS.recall5,
      cap: r.maxExamplesPerTool <= TARGETS.maxExamples,
      loss: r.maxNetLoss <= TARGETS.maxNetLoss,
      noTool: r.noTool.after.auroc >= TARGETS.noToolAuroc,
    };
    return { label, r, met, all: Object.values(met).every(Boolean) };
  });
  const losers = (r: SimulationReport): string => {
    const worst = r.requests.filter((t) => t.lost - t.gained > 0).slice(0, 3);
    return worst.length === 0 ? "none" : worst.map((t) => `${t.tool} −${t.lost - t.gained}`).join(", ");
  };
  const rows = verdicts.map(
    ({ label, r, met }) =>
      `| ${label} | ${pct(r.before.top1)} → **${pct(r.after.top1)}** | ${pct(r.before["recall@5"])} → **${pct(r.after["recall@5"])}** | ${pct(r.noTool.before.auroc)} → **${pct(r.noTool.after.auroc)}** | ${pct(r.noTool.after.precision)} / ${pct(r.noTool.after.recall)} | ${r.lessons.examplesAdded} / ${r.lessons.withdrawn} | ${r.maxExamplesPerTool} | ${r.maxNetLoss} (${losers(r)}) | ${mark(met.top1)} / ${mark(met.recall)} / ${mark(met.cap)} / ${mark(met.loss)} / ${mark(met.noTool)} | ${r.seconds.toFixed(0)} |`,
  );

  // The example-choice references: examples put on the cards directly, no learning rules.
  const seeds = [1, 2, 3];
  const spread = (xs: readonly ReferenceRow[], key: keyof ReferenceRow): string => {
    const v = xs.map((x) => x[key]);
    const lo = Math.min(...v);
    const hi = Math.max(...v);
    return lo === hi ? pct(lo) : `${pct(lo)}–${pct(hi)}`;
  };
  const ref = (label: string, xs: readonly ReferenceRow[], secondsEach: number): string =>
    `| ${label} | ${spread(xs, "top1")} | ${spread(xs, "recall5")} | ${spread(xs, "noToolAuroc")} | ${secondsEach.toFixed(0)} |`;
  const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
    const t0 = performance.now();
    const out = await f();
    return [out, (performance.now() - t0) / 1000];
  };
  const [none, noneS] = await timed(() => referenceRow(() => []));
  const [random, randomS] = await timed(() =>
    Promise.all(seeds.map((seed) => randomExamplesReference(12, undefined, { seed }))),
  );
  const [missed, missedS] = await timed(() =>
    Promise.all(seeds.map((seed) => randomExamplesReference(12, undefined, { seed, missedOnly: true }))),
  );
  const [medoids, medoidsS] = await timed(() => referenceRow(medoidsOfMissed));
  const [gated, gatedS] = await timed(() => referenceRow(medoidsOfMissed, { gated: true }));
  const [ruled, ruledS] = await timed(() => referenceRow(medoidsOfMissed, { gated: true, rules: true }));
  const [greedy, greedyS] = await timed(() => referenceRow(greedyOfMissed, { gated: true }));
  const [greedyRuled, greedyRuledS] = await timed(() => referenceRow(greedyOfMissed, { gated: true, rules: true }));
  // The references under the gate and apply's rules on the other eval folds, beside the loop's runs on them.
  const ruledFolds = [{ medoids: ruled, exact: greedyRuled }];
  for (const evalFold of [2, 3]) {
    ruledFolds.push({
      medoids: await referenceRow(medoidsOfMissed, { gated: true, rules: true, evalFold }),
      exact: await referenceRow(greedyOfMissed, { gated: true, rules: true, evalFold }),
    });
  }
  // No rules, no cap: every traffic request of each tool on its card, as the recorder keeps it.
  const allTraffic = await Promise.all(
    [1, 2, 3].map((evalFold) => referenceRow(({ own }) => own, { evalFold, gated: true })),
  );
  const [all, allS] = await timed(() => referenceRow(({ own }) => own));
  const learning = runs[0].report;
  const refRows = [
    ref("none (description only)", [none], noneS),
    ref("12 random traffic requests (seeds 1-3)", random, randomS / seeds.length),
    ref("12 random **missed** requests (seeds 1-3)", missed, missedS / seeds.length),
    `| the package's learning (\`simulate\`, defaults; the first row below) | ${pct(learning.after.top1)} | ${pct(learning.after["recall@5"])} | ${pct(learning.noTool.after.auroc)} | ${learning.seconds.toFixed(0)} |`,
    ref("medoids of the missed requests (≤ 12, `WhatIf.medoids`)", [medoids], medoidsS),
    ref("the same, masked and through the vet's gate as the loop sees them", [gated], gatedS),
    ref("the same, also held to apply's rules (≤ 220 characters, routing re-check over the traffic)", [ruled], ruledS),
    ref("the exact pass once (`WhatIf.chooseExamples` on 24 medoids, ≤ 12), masked and gated", [greedy], greedyS),
    ref("the same, also held to apply's rules", [greedyRuled], greedyRuledS),
    ref("all traffic requests of each tool", [all], allS),
  ];
  const met = verdicts.filter((v) => v.all).map((v) => v.label);
  return [
    "## Learning simulation (MetaTool)",
    "",
    "`npx tool-lessons simulate --queries ../shared/data/metatool/queries.jsonl --tools ../shared/data/metatool/tools.jsonl --traffic-folds 2,3,4 --eval-folds 1 --json`: 199 tools registered without augmentation; traffic folds 2-4 replayed as routed turns served by the first labelled tool (MetaTool's `source: negative` requests end with no tool call); review + auto-apply after each of `--cycles` equal slices (default 4) with the deterministic proposer; then every eval request is routed (never learned from). The file is sorted by tool, so in file order each tool's requests fall into one or two slices. \"No tool\": AUROC of routing's best score (eval requests with a label against the negative ones) before → after learning, and precision / recall of abstaining below the threshold `calibrateAbstain` fits on the traffic (served against no tool called; off by default in the router). Net loss: the most eval requests any tool lost from the first 5 offered, net of those it gained (`requests` in `--json`).",
    "",
    "| run | top-1 | recall@5 | no-tool AUROC | no-tool precision / recall after | examples added / withdrawn | max examples per tool | largest net loss (worst tools) | targets met: top-1 ≥ 0.69 / recall@5 ≥ 0.885 / ≤ 12 examples / net loss ≤ 2 / no-tool AUROC ≥ 0.90 | seconds |",
    "|---|---|---|---|---|---|---:|---|---|---:|",
    ...rows,
    "",
    `Targets (issue 21). Runs meeting all five: ${met.length > 0 ? met.join("; ") : "none"}.`,
    "",
    "### Choosing examples: references (eval fold 1, traffic folds 2-4)",
    "",
    'The same `ToolIndex` (default options), examples put on the cards directly with no learning rules; "missed": traffic requests routing by description alone does not offer their tool for (first 5).',
    "",
    "| examples on each tool | top-1 | recall@5 | no-tool AUROC | seconds (each) |",
    "|---|---:|---:|---:|---:|",
    ...refRows,
    "",
    "Per eval fold, the learning loop (the runs above, file order) beside the two references masked, gated and held to apply's rules, each choosing once with all the traffic in view (medoids of each tool's missed requests; the exact pass on 24 of them), and beside every traffic request of each tool on its card (masked, no cap, no rules), with the targets. Each cell: loop / medoids / exact pass / all traffic.",
    "",
    "| eval fold | top-1 | recall@5 | no-tool AUROC |",
    "|---:|---|---|---|",
    ...ruledFolds.map((g, i) => {
      const r = runs[i].report;
      const a = allTraffic[i];
      return `| ${i + 1} | **${pct(r.after.top1)}** / ${pct(g.medoids.top1)} / ${pct(g.exact.top1)} / ${pct(a.top1)} | **${pct(r.after["recall@5"])}** / ${pct(g.medoids.recall5)} / ${pct(g.exact.recall5)} / ${pct(a.recall5)} | **${pct(r.noTool.after.auroc)}** / ${pct(g.medoids.noToolAuroc)} / ${pct(g.exact.noToolAuroc)} / ${pct(a.noToolAuroc)} |`;
    }),
    `| target | ${TARGETS.top1} | ${TARGETS.recall5} | ${TARGETS.noToolAuroc} |`,
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await benchSimulation());
}
