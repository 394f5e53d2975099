/**
 * The in-memory store at a million tools: built the way `ToolIndex` builds it (lexical weights
 * fitted on every tool's text, sparse vectors added 5,000 at a time), without the ledger, to keep
 * the run to minutes and a few GB. Part of
 * `npm run bench -- routing-latency` when `TOOL_LESSONS_BENCH_ROUTING_MILLION` is set (to the tool
 * count, e.g. `1000000`): it takes minutes and several GB.
 */
import { Document } from "@langchain/core/documents";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { seededRandom as rng } from "../src/internal.js";
import { LexicalEmbeddings } from "../src/routing/lexical-embeddings.js";
import { InMemoryVectorIndex } from "../src/routing/memory-vector-store.js";
import { zipfVocabulary } from "./routing-latency.js";

/** One row of the store-alone run at a million (or `TOOL_LESSONS_BENCH_ROUTING_MILLION`) tools. */
export interface MillionRow {
  tools: number;
  /** Fitting, embedding and adding every tool (wall seconds, and CPU seconds of this process). */
  buildSeconds: number;
  buildCpuSeconds: number;
  /** After a full collection, over the tools: V8 heap, and typed arrays' memory outside it. */
  heapBytesPerTool: number;
  arrayBufferBytesPerTool: number;
  p50Ms: number;
  p95Ms: number;
  /** CPU milliseconds per search over the timed requests (steadier than wall time under load). */
  cpuMsPerSearch: number;
  /** Share of the checked requests whose top-5 ids equal the exhaustive scan's. */
  agreement: number;
  checked: number;
  searches: string;
}

function collect(): NodeJS.MemoryUsage {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
  return process.memoryUsage();
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Made-up-word tools (the bench's hard case) generated in order, `count` at a time, the same on every call. */
function* toolTexts(n: number, seed: number, count: number): Generator<string[]> {
  const random = rng(seed);
  const word = zipfVocabulary(20_000, random);
  for (let start = 0; start < n; start += count) {
    const texts: string[] = [];
    for (let i = start; i < Math.min(n, start + count); i++) {
      texts.push(`tool_${i} ${Array.from({ length: 12 + Math.floor(random() * 20) }, word).join(" ")}`);
    }
    yield texts;
  }
}

/** Builds the store over `n` made-up-word tools and times 300 top-5 requests (the first `check` compared with the exhaustive scan). */
export async function millionRow(n: number, check = 30): Promise<MillionRow> {
  const before = collect();
  const t0 = performance.now();
  const c0 = cpuMs();
  const embeddings = new LexicalEmbeddings();
  for (const texts of toolTexts(n, 11, 5_000)) embeddings.partialFit(texts);
  const store = new InMemoryVectorIndex(embeddings);
  let offset = 0;
  for (const texts of toolTexts(n, 11, 5_000)) {
    const ids = texts.map((_, j) => `tool_${offset + j}`);
    const docs = texts.map(
      (pageContent, j) => new Document({ pageContent, metadata: { partition: "default", tool: ids[j] } }),
    );
    await store.addSparseVectors(
      texts.map((t) => embeddings.embedSparse(t)),
      docs,
      { ids },
    );
    offset += texts.length;
  }
  const queryRandom = rng(12);
  const queryWord = zipfVocabulary(20_000, rng(11));
  const queries = Array.from({ length: 300 }, () =>
    embeddings.embedSparse(Array.from({ length: 5 + Math.floor(queryRandom() * 8) }, queryWord).join(" ")),
  );
  // The first search orders the common lists it walks: part of building, as in the user's first route.
  for (const q of queries.slice(0, 20)) await store.similaritySearchSparseWithScore(q, 5, { partition: "default" });
  const buildSeconds = (performance.now() - t0) / 1000;
  const buildCpuSeconds = (cpuMs() - c0) / 1000;
  const after = collect();
  const statsBefore = store.searchStats;
  const times: number[] = [];
  const c1 = cpuMs();
  for (const q of queries) {
    const t = performance.now();
    await store.similaritySearchSparseWithScore(q, 5, { partition: "default" });
    times.push(performance.now() - t);
  }
  const cpuMsPerSearch = (cpuMs() - c1) / queries.length;
  const statsAfter = store.searchStats;
  let same = 0;
  for (const q of queries.slice(0, check)) {
    const got = await store.similaritySearchSparseWithScore(q, 5, { partition: "default" });
    const exact = await store.exhaustiveSearchVectorWithScore(q, 5, { partition: "default" });
    if (JSON.stringify(got.map(([d]) => d.id)) === JSON.stringify(exact.map(([d]) => d.id))) same++;
  }
  times.sort((a, b) => a - b);
  const row: MillionRow = {
    tools: n,
    buildSeconds,
    buildCpuSeconds,
    heapBytesPerTool: (after.heapUsed - before.heapUsed) / n,
    arrayBufferBytesPerTool: (after.arrayBuffers - before.arrayBuffers) / n,
    p50Ms: times[Math.floor(times.length / 2)],
    p95Ms: times[Math.min(times.length - 1, Math.floor(0.95 * times.length))],
    cpuMsPerSearch,
    agreement: same / Math.min(check, queries.length),
    checked: Math.min(check, queries.length),
    searches: (["proven", "unproven", "fallbacks", "exact"] as const)
      .map((key) => `${key} ${statsAfter[key] - statsBefore[key]}`)
      .join(", "),
  };
  store.clear();
  return row;
}
