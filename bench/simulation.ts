/**
 * The learning simulation on MetaTool: traffic folds 2-4 replayed as routed turns served by the
 * labelled tool, review + apply after each of 4 slices (deterministic proposer), eval on fold 1
 * (never learned from). Run alone with `npx tsx bench/simulation.ts`.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { InMemoryStore } from "@langchain/langgraph";
import { hitAtK, mean, ndcgAtK } from "../src/evaluate/metrics.js";
import { type LabelledRequest, simulate, type SimulationReport, type ToolSpec } from "../src/evaluate/simulate.js";
import { ToolIndex, type ToolIndexOptions } from "../src/index/tool-index.js";
import { registerTools } from "../src/learn/register.js";
import { Ledger } from "../src/ledger/ledger.js";

const dataDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../shared/data/metatool");

function readJsonl<T>(file: string): T[] {
  return readFileSync(path.join(dataDir, file), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as T);
}

export async function runMetaToolSimulation(
  options: { shuffleSeed?: number; k?: number; cycles?: number; center?: number } = {},
): Promise<SimulationReport & { seconds: number }> {
  const tools = readJsonl<ToolSpec>("tools.jsonl");
  const queries = readJsonl<LabelledRequest & { fold: number }>("queries.jsonl");
  const t0 = performance.now();
  const report = await simulate({
    tools,
    traffic: queries.filter((q) => q.fold >= 2),
    eval: queries.filter((q) => q.fold === 1),
    k: options.k ?? 5,
    cycles: options.cycles ?? 4,
    shuffleSeed: options.shuffleSeed,
    index: options.center === undefined ? undefined : { examples: { center: options.center } },
  });
  return { ...report, seconds: (performance.now() - t0) / 1000 };
}

/**
 * The chance reference: each tool given `n` of its real traffic requests (folds 2-4) picked at
 * random (seeded) as example requests, no learning rules, then fold 1 routed.
 */
export async function randomExamplesReference(
  n = 12,
  examples?: ToolIndexOptions["examples"],
): Promise<{ top1: number; recall5: number; ndcg5: number }> {
  const tools = readJsonl<ToolSpec>("tools.jsonl");
  const queries = readJsonl<LabelledRequest & { fold: number }>("queries.jsonl");
  const ledger = new Ledger(new InMemoryStore());
  await registerTools(
    ledger,
    tools.map((t) => ({ name: t.name, description: t.description })),
    { partition: "p" },
  );
  let seed = 7;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (const card of await ledger.listCards("p")) {
    const own = queries.filter((q) => q.fold >= 2 && q.expect[0] === card.name).map((q) => q.query);
    const pick = new Set<string>();
    while (pick.size < Math.min(n, new Set(own).size)) pick.add(own[Math.floor(next() * own.length)]);
    await ledger.putCard({
      ...card,
      learned: {
        ...card.learned,
        examples: [...pick].map((text) => ({ text, source: "learned" as const, addedAt: 1 })),
      },
    });
  }
  const index = new ToolIndex({ ledger, examples });
  const top1: number[] = [];
  const recall5: number[] = [];
  const ndcg5: number[] = [];
  for (const q of queries.filter((x) => x.fold === 1 && x.expect.length > 0)) {
    const ranked = (await index.route("p", q.query, { k: 5 })).map((o) => o.tool);
    top1.push(hitAtK(ranked, q.expect, 1));
    recall5.push(hitAtK(ranked, q.expect, 5));
    ndcg5.push(ndcgAtK(ranked, q.expect, 5));
  }
  return { top1: mean(top1), recall5: mean(recall5), ndcg5: mean(ndcg5) };
}

const pct = (x: number): string => x.toFixed(3);

/** Markdown section: before/after routing on MetaTool fold 1, in file order and shuffled. */
export async function benchSimulation(): Promise<string> {
  const runs = [
    { label: "file order, k 5 (the command above)", report: await runMetaToolSimulation() },
    { label: "file order, k 5, `--center 0.5`", report: await runMetaToolSimulation({ center: 0.5 }) },
    { label: "file order, k 5, `--center 1`", report: await runMetaToolSimulation({ center: 1 }) },
    { label: "`--shuffle 1`, k 5", report: await runMetaToolSimulation({ shuffleSeed: 1 }) },
    { label: "file order, `--k 1 --cycles 8`", report: await runMetaToolSimulation({ k: 1, cycles: 8 }) },
    {
      label: "`--shuffle 1 --k 1 --cycles 8`",
      report: await runMetaToolSimulation({ shuffleSeed: 1, k: 1, cycles: 8 }),
    },
    {
      label: "`--shuffle 2 --k 1 --cycles 8`",
      report: await runMetaToolSimulation({ shuffleSeed: 2, k: 1, cycles: 8 }),
    },
    {
      label: "`--shuffle 3 --k 1 --cycles 8`",
      report: await runMetaToolSimulation({ shuffleSeed: 3, k: 1, cycles: 8 }),
    },
    {
      label: "`--shuffle 4 --k 1 --cycles 8`",
      report: await runMetaToolSimulation({ shuffleSeed: 4, k: 1, cycles: 8 }),
    },
  ];
  const verdicts = runs.map(({ label, report: r }) => {
    const drops = r.perTool.filter((t) => t.after < t.before - 0.05);
    const met = {
      top1: r.after.top1 >= 0.65,
      recall: r.after["recall@5"] >= 0.85,
      cap: r.maxExamplesPerTool <= 12,
      drops: drops.length === 0,
    };
    return { label, r, drops, met };
  });
  const mark = (ok: boolean): string => (ok ? "yes" : "no");
  const rows = verdicts.map(
    ({ label, r, drops, met }) =>
      `| ${label} | ${pct(r.before.top1)} → **${pct(r.after.top1)}** | ${pct(r.before["recall@5"])} → **${pct(r.after["recall@5"])}** | ${pct(r.before["ndcg@5"])} → ${pct(r.after["ndcg@5"])} | ${r.lessons.examplesAdded} / ${r.lessons.withdrawn} / ${r.lessons.notForAdded} | ${r.maxExamplesPerTool} | ${drops.length} of ${r.perTool.length}${drops.length > 0 ? ` (${drops.map((d) => `${d.tool} ${pct(d.before)} → ${pct(d.after)}`).join(", ")})` : ""} | ${mark(met.top1)} / ${mark(met.recall)} / ${mark(met.cap && met.drops)} | ${r.seconds.toFixed(0)} |`,
  );
  for (const [label, examples] of [
    ["", undefined],
    [", examples weighing as much as the tool part (`examples: { max: 1, half: 0 }`)", { max: 1, half: 0 }],
  ] as const) {
    const chance = await randomExamplesReference(12, examples);
    rows.push(
      `| chance: 12 random real requests per tool, no rules${label} | ${pct(chance.top1)} | ${pct(chance.recall5)} | ${pct(chance.ndcg5)} | 12 per tool (fewer where a tool has fewer) | 12 | - | - | - |`,
    );
  }
  const all = verdicts.filter((v) => v.met.top1 && v.met.recall && v.met.cap && v.met.drops).map((v) => v.label);
  const both = verdicts.filter((v) => v.met.top1 && v.met.recall).map((v) => v.label);
  return [
    "## Learning simulation (MetaTool)",
    "",
    "`npx tool-lessons simulate --queries ../shared/data/metatool/queries.jsonl --tools ../shared/data/metatool/tools.jsonl --traffic-folds 2,3,4 --eval-folds 1 --json`: 199 tools registered without augmentation; traffic folds 2-4 replayed as routed turns served by the first labelled tool; review + auto-apply after each of `--cycles` equal slices (default 4) with the deterministic proposer; then every fold-1 request with a label is routed (never learned from). The file is sorted by tool, so in file order each tool's requests fall into one or two slices (the deterministic proposer still looks at every tool in every cycle, since it calls no model); shuffled, each tool also has new calls in every cycle. `--k` is how many tools the simulated router offers, and so what counts as a miss (a request whose serving tool was not offered) and what the apply re-check protects; eval always scores the first 5.",
    "",
    "| run | top-1 | recall@5 | nDCG@5 | examples added / withdrawn / Not-for lines | max examples per tool | tools (≥ 10 eval requests) losing > 5 pts recall@5 | targets met: top-1 ≥ 0.65 / recall@5 ≥ 0.85 / ≤ 12 examples and no tool losing > 5 pts | seconds |",
    "|---|---|---|---|---|---:|---|---|---:|",
    ...rows,
    "",
    `Targets (issue 4): recall@5 >= 0.85, top-1 >= 0.65, at most 12 examples per tool, no tool losing more than 5 points. Runs meeting top-1 and recall@5: ${both.length > 0 ? both.join("; ") : "none"}. Runs meeting all four: ${all.length > 0 ? all.join("; ") : "none"}. Data README reference (TF-IDF over name + description, fold 0): top-1 0.39, recall@5 0.56; the issue's reference for 12 random real requests per tool: top-1 0.62, recall@5 0.83 (the chance row above is the same experiment on this package's routing).`,
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await benchSimulation());
}
