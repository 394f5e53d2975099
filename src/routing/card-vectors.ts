/**
 * The vector arithmetic of the routing index (`tool-index.ts`): mixing a tool's part with its
 * examples, centering, and the capped cache of tool-part vectors. Dense vectors come from users'
 * embeddings; sparse ones ({@link SparseVector}) from the package's lexical embeddings.
 */
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { norm } from "../internal.js";
import type { ToolCard } from "../ledger/schema.js";
import { routingTexts } from "./routing-text.js";
import type { ToolIndexExamplesOptions } from "./index-examples.js";
import { examplesWeight } from "./index-examples.js";
import { denseOf, isSparse, type SparseVector, sparseMix } from "./sparse-vector.js";

/** A card's or a request's vector: dense (any `Embeddings`), or sparse (the package's lexical embeddings). */
export type RoutingVector = number[] | SparseVector;

/** Entries a vector holds: its length when dense, its nonzero entries when sparse. */
function entriesOf(v: RoutingVector): number {
  return Array.isArray(v) ? v.length : v.index.length;
}

/**
 * A map from text to vector that never holds more than `maxEntries` vector entries: inserting
 * past the cap evicts the oldest vectors first, one by one, so no batch can fill it beyond its cap.
 */
export class CappedVectorCache {
  private readonly map = new Map<string, RoutingVector>();
  private entries = 0;

  constructor(readonly maxEntries: number) {}

  get(key: string): RoutingVector | undefined {
    return this.map.get(key);
  }

  /** Vector entries held now (at most `maxEntries`). */
  get size(): number {
    return this.entries;
  }

  /** The vector kept for `key`, else `make`'s, kept (as {@link set} keeps it). */
  async through(key: string, make: () => Promise<RoutingVector>): Promise<RoutingVector> {
    const kept = this.map.get(key);
    if (kept !== undefined) return kept;
    const vector = await make();
    this.set(key, vector);
    return vector;
  }

  /** Keeps `vector` unless it alone is larger than the cap. */
  set(key: string, vector: RoutingVector): void {
    const size = entriesOf(vector);
    const old = this.map.get(key);
    if (old !== undefined) {
      this.map.delete(key);
      this.entries -= entriesOf(old);
    }
    if (size > this.maxEntries) return;
    for (const [oldest, v] of this.map) {
      if (this.entries + size <= this.maxEntries) break;
      this.map.delete(oldest);
      this.entries -= entriesOf(v);
    }
    this.map.set(key, vector);
    this.entries += size;
  }
}

/**
 * The vectors at unit length, summed and divided by `tools`, the partition's tool count (at least
 * the number of vectors: a tool without examples counts as zero, so a few tools' examples are not
 * centered on themselves), added into `mean` (created at the first vector).
 */
export function addToMean(
  mean: number[] | undefined,
  vectors: readonly number[][],
  tools: number,
): number[] | undefined {
  for (const v of vectors) {
    mean ??= new Array<number>(v.length).fill(0);
    const scale = 1 / ((norm(v) || 1) * tools);
    for (let i = 0; i < v.length; i++) mean[i] += v[i] * scale;
  }
  return mean;
}

/** `unit(v) - share × mean` (v itself without a mean: centering off, or nothing learned at the last fit). */
export function centered(v: number[], mean: readonly number[] | undefined, share: number): number[] {
  if (!mean) return v;
  const scale = 1 / (norm(v) || 1);
  const out = new Array<number>(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i] * scale - share * mean[i];
  return out;
}

/** `unit(a) + weight × unit(b)`, at unit length. */
export function mix(a: readonly number[], b: readonly number[], weight: number): number[] {
  const na = norm(a) || 1;
  const nb = norm(b) || 1;
  // Plain loops into one array: vectors are long (8192 numbers by default) and mixed often.
  const out = new Array<number>(a.length);
  let s = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] / na + (weight * b[i]) / nb;
    out[i] = x;
    s += x * x;
  }
  const n = Math.sqrt(s) || 1;
  for (let i = 0; i < out.length; i++) out[i] /= n;
  return out;
}

/** `v` at unit length; `v` itself when it is already (within rounding) or is zero. */
export function unit(v: number[]): number[] {
  const n = norm(v);
  if (n === 0 || Math.abs(n - 1) < 1e-9) return v;
  return v.map((x) => x / n);
}

export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * The mean of the partition's unit example vectors (centering on, `tool` mode), embedded `batch`
 * cards at a time; undefined when no tool has examples.
 */
export async function fitExampleMean(
  embeddings: EmbeddingsInterface,
  cards: readonly ToolCard[],
  batch: number,
  each = false,
  check: (vectors: number[][]) => number[][] = (vectors) => vectors,
): Promise<number[] | undefined> {
  let mean: number[] | undefined;
  for (let start = 0; start < cards.length; start += batch) {
    const examples = cards
      .slice(start, start + batch)
      .map((c) => routingTexts(c).examples)
      .filter((e) => e.length > 0);
    if (examples.length === 0) continue;
    const texts = each ? examples.flat() : examples.map((e) => e.join("\n"));
    const vectors = check(await embeddings.embedDocuments(texts));
    const perTool = each
      ? meansOfUnits(
          vectors,
          examples.map((e) => e.length),
        )
      : vectors;
    mean = addToMean(mean, perTool, cards.length);
  }
  return mean;
}

/**
 * Consecutive groups of `vectors` (`counts[i]` vectors for group `i`) as the mean of their unit
 * vectors: a tool's examples embedded one by one, as one example vector.
 */
export function meansOfUnits(vectors: readonly number[][], counts: readonly number[]): number[][] {
  const out: number[][] = [];
  let at = 0;
  for (const count of counts) {
    const group = vectors.slice(at, at + count);
    at += count;
    const mean = new Array<number>(group[0]?.length ?? 0).fill(0);
    for (const v of group) {
      const scale = 1 / ((norm(v) || 1) * group.length);
      for (let i = 0; i < v.length; i++) mean[i] += v[i] * scale;
    }
    out.push(mean);
  }
  return out;
}

/**
 * In `tool` mode, each card's one vector: its tool part (from `cache` when embedded before) mixed
 * with its examples' vector weighted by {@link examplesWeight}; the examples embedded as one text,
 * or each on its own and averaged (`examples.embed`). One `embed` call for every text not cached.
 */
export async function mixedToolVectors(
  cards: readonly ToolCard[],
  cache: CappedVectorCache,
  examples: Required<ToolIndexExamplesOptions>,
  exampleMean: number[] | undefined,
  embed: (texts: string[]) => Promise<RoutingVector[]>,
): Promise<RoutingVector[][]> {
  const parts = cards.map((c) => routingTexts(c));
  const toolVectors = new Map<string, RoutingVector>();
  for (const p of parts) {
    const cached = cache.get(p.tool);
    if (cached) toolVectors.set(p.tool, cached);
  }
  const missing = [...new Set(parts.map((p) => p.tool).filter((t) => !toolVectors.has(t)))];
  const withExamples = parts.filter((p) => p.examples.length > 0);
  const each = examples.embed === "each";
  const texts = each ? withExamples.flatMap((p) => p.examples) : withExamples.map((p) => p.examples.join("\n"));
  const flat = await embed([...missing, ...texts]);
  missing.forEach((text, i) => {
    toolVectors.set(text, flat[i]);
    cache.set(text, flat[i]);
  });
  const embedded = flat.slice(missing.length);
  const exampleVectors: RoutingVector[] = each
    ? meansOfUnits(
        embedded.map((v) => (isSparse(v) ? denseOf(v) : v)),
        withExamples.map((p) => p.examples.length),
      )
    : embedded;
  let i = 0;
  return parts.map((p) => {
    const tool = toolVectors.get(p.tool)!;
    if (p.examples.length === 0) return [tool];
    const weight = examplesWeight(p.examples.length, examples);
    const e = exampleVectors[i++];
    if (isSparse(tool) && isSparse(e)) return [sparseMix(tool, e, weight)];
    const dense = centered(isSparse(e) ? denseOf(e) : e, exampleMean, examples.center);
    return [mix(isSparse(tool) ? denseOf(tool) : tool, dense, weight)];
  });
}
