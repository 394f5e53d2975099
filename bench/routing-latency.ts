/**
 * Top-5 routing latency and indexing throughput of the indexes, over 1k, 10k and 100k synthetic
 * tools: in memory and on a real Chroma server started from the `chromadb` package, through the
 * package's `ChromaVectorIndex` and through `@langchain/community`'s `Chroma` side by side.
 *
 * Run alone with `npx tsx bench/routing-latency.ts`; `benchRoutingLatency()` returns the markdown.
 */
import { cpus, loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Chroma } from "@langchain/community/vectorstores/chroma";
import { Document } from "@langchain/core/documents";
import { ChromaClient } from "chromadb";
import { ChromaVectorIndex } from "../src/index/chroma.js";
import { ChromaBindingUnavailable, startChromaServer, type ChromaServer } from "../src/index/chroma-server.js";
import { LexicalEmbeddings } from "../src/index/lexical-embeddings.js";
import { InMemoryVectorIndex, type MetadataFilter } from "../src/index/memory-vector-store.js";
import { seededRandom as rng } from "../src/internal.js";

const SYLLABLES = [
  "ka",
  "lo",
  "mi",
  "ne",
  "tor",
  "sha",
  "vel",
  "qu",
  "ar",
  "zen",
  "pol",
  "dri",
  "fa",
  "gus",
  "hen",
  "bi",
  "ro",
  "ste",
  "wu",
  "xi",
];

/** A vocabulary of `size` made-up words and a Zipf sampler over it (word frequency ∝ 1/rank). */
function zipfVocabulary(size: number, random: () => number): () => string {
  const words: string[] = [];
  const seen = new Set<string>();
  while (words.length < size) {
    const n = 2 + Math.floor(random() * 3);
    let w = "";
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    if (!seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  }
  const cumulative: number[] = [];
  let total = 0;
  for (let r = 1; r <= size; r++) cumulative.push((total += 1 / r));
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = size - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return words[lo];
  };
}

interface Workload {
  texts: string[];
  partitions: string[];
  queries: string[];
}

function workload(n: number, seed: number): Workload {
  const random = rng(seed);
  const word = zipfVocabulary(20_000, random);
  const texts: string[] = [];
  const partitions: string[] = [];
  for (let i = 0; i < n; i++) {
    const length = 12 + Math.floor(random() * 20);
    texts.push(`tool_${i}: ${Array.from({ length }, word).join(" ")}`);
    partitions.push(`p${i % 4}`);
  }
  const queries = Array.from({ length: 300 }, () =>
    Array.from({ length: 5 + Math.floor(random() * 8) }, word).join(" "),
  );
  return { texts, partitions, queries };
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

interface Latency {
  p50: number;
  p95: number;
}

async function timeQueries(
  run: (q: number[]) => Promise<unknown>,
  vectors: readonly number[][],
  warmup = 20,
): Promise<Latency> {
  for (let i = 0; i < Math.min(warmup, vectors.length); i++) await run(vectors[i]);
  const times: number[] = [];
  for (const v of vectors) {
    const t = performance.now();
    await run(v);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p95: percentile(times, 0.95) };
}

interface Row {
  store: string;
  vectors: string;
  n: number;
  embedPerSecond?: number;
  indexPerSecond: number;
  plain: Latency;
  filtered: Latency;
}

const CHUNK = 5_000;
const PARTITION: MetadataFilter = { partition: "p1" };

/** Embeds and indexes a workload in chunks (so 100k `number[]` vectors are never all alive at once). */
async function fill(
  add: (vectors: number[][], docs: Document[], ids: string[]) => Promise<unknown>,
  embed: (texts: string[]) => Promise<number[][]>,
  w: Workload,
): Promise<{ embedSeconds: number; indexSeconds: number }> {
  let embedSeconds = 0;
  let indexSeconds = 0;
  for (let start = 0; start < w.texts.length; start += CHUNK) {
    const texts = w.texts.slice(start, start + CHUNK);
    let t = performance.now();
    const vectors = await embed(texts);
    embedSeconds += (performance.now() - t) / 1000;
    const docs = texts.map(
      (pageContent, j) => new Document({ pageContent, metadata: { partition: w.partitions[start + j], kind: "tool" } }),
    );
    const ids = texts.map((_, j) => `tool_${start + j}`);
    t = performance.now();
    await add(vectors, docs, ids);
    indexSeconds += (performance.now() - t) / 1000;
  }
  return { embedSeconds, indexSeconds };
}

function randomUnitVectors(count: number, dimension: number, random: () => number): number[][] {
  return Array.from({ length: count }, () => {
    const v = Array.from({ length: dimension }, () => random() * 2 - 1);
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  });
}

const fmt = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(1));

/** Most tools the in-memory rows run with the default lexical dimension; above, 2048-d. */
const LARGEST_DEFAULT = 10_000;

/** Runs the benchmark and returns a markdown section. */
export async function benchRoutingLatency(): Promise<string> {
  const rows: Row[] = [];
  const notes: string[] = [];
  const loadAverageAtStart = loadavg()[0].toFixed(1);
  const sizes = [1_000, 10_000, 100_000];
  let queryEmbedMs = 0;

  for (const n of sizes) {
    const w = workload(n, n);
    // 100k tools at the default dimension would hold 100k x 8192 floats (3.3 GB) in memory.
    const embeddings = new LexicalEmbeddings(n > LARGEST_DEFAULT ? { dimension: 2048 } : {}).partialFit(w.texts);
    const queryVectors = await embeddings.embedDocuments(w.queries);
    let t = performance.now();
    for (const q of w.queries) await embeddings.embedQuery(q);
    queryEmbedMs = (performance.now() - t) / w.queries.length;

    const memory = new InMemoryVectorIndex(embeddings);
    const { embedSeconds, indexSeconds } = await fill(
      (vectors, docs, ids) => memory.addVectors(vectors, docs, { ids }),
      (texts) => embeddings.embedDocuments(texts),
      w,
    );
    rows.push({
      store: "in-memory",
      vectors: `lexical ${embeddings.options.dimension}-d`,
      n,
      embedPerSecond: n / embedSeconds,
      indexPerSecond: n / indexSeconds,
      plain: await timeQueries((q) => memory.similaritySearchVectorWithScore(q, 5), queryVectors),
      filtered: await timeQueries((q) => memory.similaritySearchVectorWithScore(q, 5, PARTITION), queryVectors),
    });
    memory.clear();
  }

  // Dense vectors (what a hosted embedding model gives) cost every dimension on every row.
  for (const n of [1_000, 10_000]) {
    const random = rng(7 + n);
    const dimension = 1536;
    const memory = new InMemoryVectorIndex(new LexicalEmbeddings());
    const vectors = randomUnitVectors(n, dimension, random);
    const t = performance.now();
    await memory.addVectors(
      vectors,
      vectors.map((_, i) => new Document({ pageContent: `t${i}`, metadata: { partition: `p${i % 4}` } })),
    );
    const indexSeconds = (performance.now() - t) / 1000;
    const queries = randomUnitVectors(200, dimension, random);
    rows.push({
      store: "in-memory",
      vectors: `random dense ${dimension}-d`,
      n,
      indexPerSecond: n / indexSeconds,
      plain: await timeQueries((q) => memory.similaritySearchVectorWithScore(q, 5), queries),
      filtered: await timeQueries((q) => memory.similaritySearchVectorWithScore(q, 5, PARTITION), queries),
    });
  }

  let server: ChromaServer | undefined;
  try {
    server = await startChromaServer();
  } catch (error) {
    if (!(error instanceof ChromaBindingUnavailable)) throw error;
    notes.push(`Chroma rows skipped: ${error.message.split("\n")[0]}`);
  }
  if (server) {
    try {
      const chromaSizes = [1_000, 10_000];
      for (const n of chromaSizes) {
        const w = workload(n, n);
        // 2048-d: every vector crosses HTTP as JSON, so the payload grows with the dimension.
        const embeddings = new LexicalEmbeddings({ dimension: 2048 }).partialFit(w.texts);
        const queryVectors = (await embeddings.embedDocuments(w.queries)).slice(0, 200);
        const index = await ChromaVectorIndex.create({
          embeddings,
          collectionName: `latency-${n}`,
          host: server.host,
          port: server.port,
        });
        const { indexSeconds } = await fill(
          (vectors, docs, ids) => index.addVectors(vectors, docs, { ids }),
          (texts) => embeddings.embedDocuments(texts),
          w,
        );
        rows.push({
          store: "ChromaVectorIndex (local Chroma server)",
          vectors: `lexical ${embeddings.options.dimension}-d`,
          n,
          indexPerSecond: n / indexSeconds,
          plain: await timeQueries((q) => index.similaritySearchVectorWithScore(q, 5), queryVectors),
          filtered: await timeQueries((q) => index.similaritySearchVectorWithScore(q, 5, PARTITION), queryVectors),
        });
        await index.clear();

        // The same workload through community Chroma (cosine space, as ChromaVectorIndex uses),
        // upserts sent 1,000 at a time as ChromaVectorIndex batches them.
        const client = new ChromaClient({ host: server.host, port: server.port });
        const community = new Chroma(embeddings, {
          index: client,
          collectionName: `latency-community-${n}`,
          collectionMetadata: { "hnsw:space": "cosine" },
        });
        const communityFill = await fill(
          async (vectors, docs, ids) => {
            for (let start = 0; start < ids.length; start += 1_000) {
              await community.addVectors(vectors.slice(start, start + 1_000), docs.slice(start, start + 1_000), {
                ids: ids.slice(start, start + 1_000),
              });
            }
          },
          (texts) => embeddings.embedDocuments(texts),
          w,
        );
        rows.push({
          store: "community `Chroma` (local Chroma server)",
          vectors: `lexical ${embeddings.options.dimension}-d`,
          n,
          indexPerSecond: n / communityFill.indexSeconds,
          plain: await timeQueries((q) => community.similaritySearchVectorWithScore(q, 5), queryVectors),
          filtered: await timeQueries(
            (q) => community.similaritySearchVectorWithScore(q, 5, { partition: "p1" }),
            queryVectors,
          ),
        });
        await client.deleteCollection({ name: `latency-community-${n}` });
      }
      const tenK = rows.find((r) => r.store.startsWith("ChromaVectorIndex") && r.n === 10_000);
      if (tenK) {
        notes.push(
          `Chroma at 100k not run: indexing runs at about ${Math.round(tenK.indexPerSecond)} docs/s here, so 100k 2048-d vectors would take ~${Math.round(100_000 / tenK.indexPerSecond / 60)} min of the benchmark.`,
        );
      }
    } finally {
      await server.stop();
    }
  }

  const lines = [
    "## Routing latency and indexing throughput",
    "",
    "Synthetic tools: `tool_i:` plus 12-31 words drawn Zipf-style from 20,000 made-up words; 300 requests of 5-12 words " +
      "from the same distribution. Lexical rows use `LexicalEmbeddings` fitted on the tool texts, at the dimension in the vectors column " +
      "(the default 8192 up to 10k tools in memory; 2048 for 100k in memory, where 8192 would hold 3.3 GB, and for Chroma, " +
      "where every vector crosses HTTP as JSON), so " +
      "vectors are sparse like real lexical vectors; the dense rows use random unit vectors of 1536 dimensions (the shape of a " +
      "hosted embedding model's output). Latency is one top-5 `similaritySearchVectorWithScore` call with a precomputed query " +
      `vector (embedding a request adds ~${queryEmbedMs.toFixed(2)} ms); "filtered" keeps one of 4 partitions. ` +
      "Indexing is `addVectors` with ids (upsert) in chunks of 5,000 (community `Chroma` is handed 1,000 at a time, the batch `ChromaVectorIndex` sends; " +
      "it upserts where `ChromaVectorIndex` looks up, deletes and adds, so that a replaced record keeps no old metadata key); embedding throughput is listed apart. " +
      "Both Chroma stores query the same server, collections in the cosine space. " +
      `Machine: ${process.platform} ${process.arch}, ${cpus().length} cores, Node ${process.version}; ` +
      `load average ${loadAverageAtStart} at the start, ${loadavg()[0].toFixed(1)} at the end (figures above 1 per core mean other work shared the CPU and inflated the latencies).`,
    "",
    "| store | vectors | tools | embed docs/s | index docs/s | p50 ms | p95 ms | filtered p50 ms | filtered p95 ms |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.store} | ${r.vectors} | ${r.n.toLocaleString("en-US")} | ${r.embedPerSecond === undefined ? "-" : Math.round(r.embedPerSecond).toLocaleString("en-US")} | ${Math.round(r.indexPerSecond).toLocaleString("en-US")} | ${fmt(r.plain.p50)} | ${fmt(r.plain.p95)} | ${fmt(r.filtered.p50)} | ${fmt(r.filtered.p95)} |`,
    ),
    "",
  ];
  const tenKMemory = rows.find((r) => r.store === "in-memory" && r.n === 10_000 && r.vectors.startsWith("lexical"));
  if (tenKMemory) {
    lines.push(
      `Target: 10k tools in memory, p50 <= 5 ms: ${tenKMemory.plain.p50 <= 5 ? "met" : "not met"} (${fmt(tenKMemory.plain.p50)} ms).`,
      "",
    );
  }
  for (const note of notes) lines.push(note, "");
  return lines.join("\n");
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(await benchRoutingLatency());
}
