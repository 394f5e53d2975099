import { InMemoryStore } from "@langchain/langgraph";
import { z } from "zod";
import { InvalidInput } from "../errors.js";
import { ToolIndex, type ToolIndexOptions } from "../routing/tool-index.js";
import type { Offer } from "../ledger/schema.js";
import { Ledger } from "../ledger/ledger.js";
import { registerTools } from "../learn/register.js";
import { LessonManager } from "../learn/manager.js";
import type { Proposer } from "../learn/proposer.js";
import type { ExampleObjective } from "../learn/example-objective.js";
import { maskRequest } from "../text/mask.js";
import { staticAllowedWords } from "../text/free-text.js";
import { WordReleases } from "../record/word-releases.js";
import type { SettingsInput } from "../settings.js";
import type { AbstainOptions } from "./calibrate-abstain.js";
import { abstainExamples } from "./abstain-model.js";
import { figuresByKind, fitDecisions, type KindFigures, modelFigures, type RoutedEval } from "./simulate-abstain.js";
import { hitAtK, mean, ndcgAtK, type NoToolFigures, noToolFigures } from "./metrics.js";
import { seededRandom } from "../internal.js";
import type { Prefetching } from "../routing/blended-embeddings.js";
import { bucketFigures, type BucketFigures, popularityBuckets } from "./simulate-buckets.js";

/** A tool as the simulation reads it (the MetaTool `tools.jsonl` format). */
export const ToolSpecSchema = z.object({
  name: z.string().min(1),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
});
export type ToolSpec = z.infer<typeof ToolSpecSchema>;

/** A labelled request (the MetaTool `queries.jsonl` format). `expect: []` means no tool. */
export const LabelledRequestSchema = z.object({
  query: z.string(),
  expect: z.array(z.string()),
  /** What kind of request it is (e.g. `off_topic`), for "no tool" figures per kind. */
  kind: z.string().optional(),
});
export type LabelledRequest = z.infer<typeof LabelledRequestSchema>;

/** Routing quality over labelled requests with a non-empty `expect`. */
export interface RoutingScores {
  /** Share whose first offered tool is one of `expect`. */
  top1: number;
  /** Share with any of `expect` among the first 5 offered. */
  "recall@5": number;
  /** nDCG@5 with every tool in `expect` relevant. */
  "ndcg@5": number;
  /** Requests scored. */
  n: number;
}

/** Options of {@link simulate}. */
export interface SimulateOptions {
  tools: readonly ToolSpec[];
  /** Replayed in order as routed turns, each served by the first tool in `expect`. */
  traffic: readonly LabelledRequest[];
  /** Routed before and after learning; never learned from. */
  eval: readonly LabelledRequest[];
  /**
   * Tools routing offers per request.
   * @default 5
   */
  k?: number;
  /**
   * Review + apply rounds, one after each equal slice of the traffic.
   * @default 4
   */
  cycles?: number;
  /** Who proposes lessons. @default the manager's deterministic proposer */
  proposer?: Proposer;
  /**
   * Options of the routing index (e.g. `{ examples: { center: 1 } }`), as an application would
   * pass them to {@link ToolIndex}.
   * @default {} (the index's defaults)
   */
  index?: Omit<ToolIndexOptions, "ledger">;
  /**
   * How a review values candidate examples (the manager's `exampleObjective`, e.g.
   * `{ lossWeight: 1 }`), to try another trade-off on this traffic; validated.
   * @default DEFAULT_EXAMPLE_OBJECTIVE
   */
  exampleObjective?: Partial<ExampleObjective>;
  /** Settings for the simulated partition (e.g. `{ maxNewQueries: 12 }`), validated. */
  settings?: SettingsInput;
  /**
   * Replay the traffic in a seeded random order instead of file order. Useful when the file is
   * sorted (MetaTool's is grouped by tool, so in file order each tool has new calls in one or two
   * slices only).
   * @default undefined (file order)
   */
  shuffleSeed?: number;
  /**
   * Options of the "no tool" calibration (see `calibrateAbstain`): its threshold is fitted on the
   * traffic, before learning with the index as registered, after learning with the index as learned.
   * @default {} (its defaults, every traffic request read)
   */
  abstain?: AbstainOptions;
  /** Called after each cycle (progress). */
  onCycle?: (info: { cycle: number; revisions: number; examplesAdded: number }) => void;
}

/** What {@link simulate} reports. */
export interface SimulationReport {
  before: RoutingScores;
  after: RoutingScores;
  lessons: { examplesAdded: number; notForAdded: number; withdrawn: number };
  maxExamplesPerTool: number;
  /** Recall@5 per tool with at least 10 eval requests, before and after. */
  perTool: { tool: string; n: number; before: number; after: number }[];
  /**
   * "No tool" before and after learning: AUROC of routing's best score (eval requests with a
   * label against those without), and precision and recall of abstaining below the threshold
   * calibrated on the traffic's own requests (served against ended with no tool call).
   */
  noTool: { before: NoToolFigures; after: NoToolFigures };
  /**
   * "No tool" by the fitted model (`fitAbstainModel`: score gap, the score against the partition's
   * own calibration, request features), fitted on the traffic before and after learning; a side is
   * absent when the traffic did not hold enough of both kinds.
   */
  abstainModel: { before?: NoToolFigures; after?: NoToolFigures };
  /** Both decisions per `kind` of the eval requests, after learning; absent when no request says one. */
  noToolByKind?: KindFigures[];
  /**
   * Per tool with eval requests: how many of them entered the first `k` offered (`gained`) and
   * how many left it (`lost`) with learning, as counts; sorted by net loss, worst first.
   */
  requests: { tool: string; n: number; gained: number; lost: number }[];
  /** Largest net loss (`lost - gained`) of any tool, in eval requests (0 when none lost more than it gained). */
  maxNetLoss: number;
  /**
   * The routing figures and the largest net loss by popularity bucket (`simulate-buckets.ts`):
   * the head (the most-served tools that took half the traffic), the torso, the tools with no traffic.
   */
  buckets: BucketFigures[];
  cycles: number;
  k: number;
  /** Seed of the replay order, when shuffled. */
  shuffleSeed?: number;
}

const PARTITION = "simulation";

/**
 * "How much would learning help on my traffic?" Registers the tools (no augmentation), replays
 * the traffic as routed turns whose request was served by the first expected tool (the outcome
 * an application would report), runs review + apply after each of `cycles` equal slices with the
 * deterministic proposer, and routes every eval request before and after.
 */
export async function simulate(options: SimulateOptions): Promise<SimulationReport> {
  const k = options.k ?? 5;
  const cycles = options.cycles ?? 4;
  if (options.tools.length === 0) throw new InvalidInput("simulate() needs at least one tool.");
  if (!Number.isInteger(cycles) || cycles < 1)
    throw new InvalidInput(`--cycles must be a positive integer; got ${cycles}.`);
  const known = new Set(options.tools.map((t) => t.name));

  const ledger = new Ledger(new InMemoryStore());
  await ledger.configure(PARTITION, {
    routingK: k,
    maxTools: options.tools.length,
    retainTurns: Math.max(20_000, options.traffic.length + 1),
    // Every review reads the whole replayed traffic, as it did before reviews read a window.
    reviewTurns: Math.max(10_000, options.traffic.length + 1),
    ...options.settings,
  });
  await registerTools(
    ledger,
    options.tools.map((t) => ({ name: t.name, description: t.description, schema: t.parameters ?? undefined })),
    { partition: PARTITION },
  );
  const index = new ToolIndex({ ...options.index, ledger });
  await index.reindex(PARTITION);
  const manager = new LessonManager({
    ledger,
    index,
    proposer: options.proposer,
    exampleObjective: options.exampleObjective,
  });

  const replayed = options.traffic.map((r) => {
    const servedBy = r.expect.find((t) => known.has(t));
    return {
      request: maskRequest(r.query),
      servedBy,
      calls: servedBy ? [{ tool: servedBy, outcome: "success" as const }] : [],
    };
  });
  const traffic = options.shuffleSeed === undefined ? options.traffic : shuffled(options.traffic, options.shuffleSeed);
  // Embeddings that encode ahead (the sentence encoder on its own core) get the requests in the
  // order they are routed first: the eval requests, the traffic for the "no tool" fit, the replay.
  (options.index?.embeddings as Partial<Prefetching> | undefined)?.prefetch?.([
    ...options.eval.map((c) => c.query),
    ...replayed.map((r) => r.request),
    ...traffic.map((r) => r.query),
  ]);
  const beforeRoutes = await routeAll(index, options.eval, k);
  const beforeRanks = beforeRoutes.map((r) => r.tools);
  const abstain = { maxSamples: options.traffic.length, ...options.abstain };
  const decisionsBefore = fitDecisions(await abstainExamples(index, PARTITION, replayed, abstain), abstain);
  const lessons = { examplesAdded: 0, notForAdded: 0, withdrawn: 0 };
  const slices = split(traffic, cycles);
  let seq = 0;
  // Requests are stored as the recorder stores them: each its own thread and caller (MetaTool's
  // requests come from different people), words outside the static allow-list as tokens until
  // enough distinct callers show them (`word-releases.ts`).
  const releases = new WordReleases();
  const key = await ledger.fingerprintKey(PARTITION);
  for (let cycle = 0; cycle < slices.length; cycle++) {
    for (const request of slices[cycle]) {
      seq += 1;
      const requestId = `r${seq}`;
      const threadId = `t${seq}`;
      const servedBy = request.expect.find((t) => known.has(t));
      const allowed = staticAllowedWords(servedBy ? [servedBy] : [], []);
      const masked = releases.keep(
        maskRequest(request.query),
        { partition: PARTITION, thread: threadId, caller: threadId },
        allowed,
        key,
      );
      const offered = await index.route(PARTITION, request.query, { k });
      await ledger.appendRoutes([{ partition: PARTITION, threadId, requestId, offered, allSent: false, k }]);
      if (servedBy) {
        await ledger.appendCalls([
          {
            partition: PARTITION,
            tool: servedBy,
            runId: requestId,
            threadId,
            requestId,
            args: [],
            fingerprints: [],
            outcome: "success",
            source: "api",
          },
        ]);
      }
      await ledger.appendTurns([
        {
          partition: PARTITION,
          threadId,
          requestId,
          request: masked,
          calls: servedBy ? [{ tool: servedBy, outcome: "success" }] : [],
          servedBy,
        },
      ]);
    }
    await releases.save(ledger);
    const review = await manager.review({ partition: PARTITION, autoApply: true });
    let added = 0;
    for (const r of review.revisions) {
      added += r.queriesAdded.length - r.queriesWithdrawn.length;
      lessons.notForAdded += r.avoidAdded.length;
      lessons.withdrawn += r.queriesWithdrawn.length;
    }
    lessons.examplesAdded += added;
    options.onCycle?.({ cycle: cycle + 1, revisions: review.revisions.length, examplesAdded: added });
  }
  const afterRoutes = await routeAll(index, options.eval, k);
  const afterRanks = afterRoutes.map((r) => r.tools);
  const turnsAfter = await ledger.listTurns(PARTITION);
  const decisionsAfter = fitDecisions(await abstainExamples(index, PARTITION, turnsAfter, abstain), abstain);
  const requests = requestCounts(options.eval, beforeRanks, afterRanks, k);
  const served = new Map<string, number>();
  for (const r of replayed) if (r.servedBy) served.set(r.servedBy, (served.get(r.servedBy) ?? 0) + 1);
  const buckets = bucketFigures(
    options.eval,
    beforeRanks,
    afterRanks,
    popularityBuckets([...known], served),
    served,
    new Map(requests.map((r) => [r.tool, r.lost - r.gained])),
  );

  const cards = await ledger.listCards(PARTITION);
  const maxExamplesPerTool = Math.max(0, ...cards.map((c) => c.learned.examples.length));
  return {
    before: scores(options.eval, beforeRanks),
    after: scores(options.eval, afterRanks),
    lessons,
    maxExamplesPerTool,
    perTool: perTool(options.eval, beforeRanks, afterRanks),
    noTool: {
      before: noToolOf(options.eval, beforeRoutes, decisionsBefore.threshold),
      after: noToolOf(options.eval, afterRoutes, decisionsAfter.threshold),
    },
    ...abstainFigures(options.eval, beforeRoutes, afterRoutes, decisionsBefore, decisionsAfter),
    requests,
    maxNetLoss: Math.max(0, ...requests.map((r) => r.lost - r.gained)),
    buckets,
    cycles,
    k,
    shuffleSeed: options.shuffleSeed,
  };
}

/** Each request's offered tools (at least 5), best first, the best score and the offers. */
async function routeAll(
  index: ToolIndex,
  cases: readonly LabelledRequest[],
  k: number,
): Promise<{ tools: string[]; best: number; offers: Offer[] }[]> {
  const out: { tools: string[]; best: number; offers: Offer[] }[] = [];
  for (const c of cases) {
    const offers = await index.route(PARTITION, c.query, { k: Math.max(k, 5) });
    out.push({ tools: offers.map((o) => o.tool), best: offers[0]?.score ?? Number.NEGATIVE_INFINITY, offers });
  }
  return out;
}

/** The model's "no tool" figures before and after, and both decisions per kind after. */
function abstainFigures(
  cases: readonly LabelledRequest[],
  before: readonly { offers: Offer[] }[],
  after: readonly { offers: Offer[] }[],
  decisionsBefore: ReturnType<typeof fitDecisions>,
  decisionsAfter: ReturnType<typeof fitDecisions>,
): Pick<SimulationReport, "abstainModel" | "noToolByKind"> {
  const routed = (routes: readonly { offers: Offer[] }[]): RoutedEval[] =>
    cases.map((c, i) => ({ query: c.query, expect: c.expect, kind: c.kind, offers: routes[i].offers }));
  const byKind = figuresByKind(routed(after), decisionsAfter);
  const modelBefore = modelFigures(routed(before), decisionsBefore.model);
  const modelAfter = modelFigures(routed(after), decisionsAfter.model);
  return {
    abstainModel: { ...(modelBefore ? { before: modelBefore } : {}), ...(modelAfter ? { after: modelAfter } : {}) },
    ...(byKind.length > 0 ? { noToolByKind: byKind } : {}),
  };
}

function noToolOf(
  cases: readonly LabelledRequest[],
  routes: readonly { best: number }[],
  threshold: number | undefined,
): NoToolFigures {
  const served: number[] = [];
  const none: number[] = [];
  cases.forEach((c, i) => (c.expect.length === 0 ? none : served).push(routes[i].best));
  return noToolFigures(served, none, threshold);
}

/** Per tool, eval requests that entered and left the first `k` offered. */
function requestCounts(
  cases: readonly LabelledRequest[],
  before: readonly string[][],
  after: readonly string[][],
  k: number,
): SimulationReport["requests"] {
  const by = new Map<string, { n: number; gained: number; lost: number }>();
  cases.forEach((c, i) => {
    for (const tool of c.expect) {
      const entry = by.get(tool) ?? { n: 0, gained: 0, lost: 0 };
      const was = before[i].slice(0, k).includes(tool);
      const is = after[i].slice(0, k).includes(tool);
      entry.n += 1;
      if (is && !was) entry.gained += 1;
      if (was && !is) entry.lost += 1;
      by.set(tool, entry);
    }
  });
  return [...by]
    .map(([tool, v]) => ({ tool, ...v }))
    .sort((x, y) => y.lost - y.gained - (x.lost - x.gained) || x.tool.localeCompare(y.tool));
}

function scores(cases: readonly LabelledRequest[], ranked: readonly string[][]): RoutingScores {
  const top1: number[] = [];
  const recall: number[] = [];
  const ndcg: number[] = [];
  cases.forEach((c, i) => {
    if (c.expect.length === 0) return;
    top1.push(hitAtK(ranked[i], c.expect, 1));
    recall.push(hitAtK(ranked[i], c.expect, 5));
    ndcg.push(ndcgAtK(ranked[i], c.expect, 5));
  });
  return { top1: mean(top1), "recall@5": mean(recall), "ndcg@5": mean(ndcg), n: top1.length };
}

function perTool(
  cases: readonly LabelledRequest[],
  before: readonly string[][],
  after: readonly string[][],
): SimulationReport["perTool"] {
  const by = new Map<string, { b: number[]; a: number[] }>();
  cases.forEach((c, i) => {
    for (const tool of c.expect) {
      const entry = by.get(tool) ?? { b: [], a: [] };
      entry.b.push(before[i].slice(0, 5).includes(tool) ? 1 : 0);
      entry.a.push(after[i].slice(0, 5).includes(tool) ? 1 : 0);
      by.set(tool, entry);
    }
  });
  return [...by]
    .filter(([, v]) => v.b.length >= 10)
    .map(([tool, v]) => ({ tool, n: v.b.length, before: mean(v.b), after: mean(v.a) }))
    .sort((x, y) => x.tool.localeCompare(y.tool));
}

/** Fisher-Yates with a seeded generator, so a run is repeatable. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  const next = seededRandom(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function split<T>(items: readonly T[], parts: number): T[][] {
  const out: T[][] = [];
  const size = Math.ceil(items.length / parts);
  for (let i = 0; i < parts; i++) out.push(items.slice(i * size, (i + 1) * size));
  return out;
}
