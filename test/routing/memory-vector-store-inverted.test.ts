import { readFileSync } from "node:fs";
import { Document, type DocumentInterface } from "@langchain/core/documents";
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { BlendedEmbeddings } from "../../src/routing/blended-embeddings.js";
import { LexicalEmbeddings } from "../../src/routing/lexical-embeddings.js";
import {
  InMemoryVectorIndex,
  type InMemoryFilter,
  SPARSE_MAX_NONZERO_SHARE,
} from "../../src/routing/memory-vector-store.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { seededRandom as rng } from "../../src/internal.js";
import { METATOOL_DIR, metaToolUnavailableReason } from "../helpers/metatool.js";

const unused = new LexicalEmbeddings({ dimension: 8 });
const doc = (id: string, metadata: Record<string, unknown>) => new Document({ pageContent: id, metadata, id });

/** Ids and scores, as compared: scores to the bit. */
const shape = (hits: [DocumentInterface, number][]) => hits.map(([d, s]) => [d.id, s] as const);

/** Three searches of one corpus: dense layout (exhaustive column scan), sparse inverted, sparse exhaustive. */
async function allThree(
  dense: InMemoryVectorIndex,
  sparse: InMemoryVectorIndex,
  q: number[],
  k: number,
  f?: InMemoryFilter,
) {
  const reference = shape(await dense.similaritySearchVectorWithScore(q, k, f));
  expect(shape(await sparse.similaritySearchVectorWithScore(q, k, f))).toEqual(reference);
  expect(shape(await sparse.exhaustiveSearchVectorWithScore(q, k, f))).toEqual(reference);
  return reference;
}

describe("InMemoryVectorIndex, sparse layout (inverted index)", () => {
  it("holds lexical vectors sparse by default and turns dense at the first dense vector", async () => {
    const index = new InMemoryVectorIndex(unused);
    const sparse = [1, 0, 0, 0, 0, 0, 0, 0];
    await index.addVectors([sparse, sparse.slice().reverse()], [doc("a", {}), doc("b", {})], { ids: ["a", "b"] });
    expect(index.layout).toBe("sparse");
    const before = shape(await index.similaritySearchVectorWithScore([1, 0, 0, 0, 0, 0, 0, 1], 2));
    await index.addVectors([[1, 1, 1, 1, 1, 0, 0, 0]], [doc("c", {})], { ids: ["c"] });
    expect(index.layout).toBe("dense");
    expect(await index.getVector("a")).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    const after = shape(await index.similaritySearchVectorWithScore([1, 0, 0, 0, 0, 0, 0, 1], 3));
    expect(after.filter(([id]) => id !== "c")).toEqual(before);
    index.clear();
    await index.addVectors([sparse], [doc("a", {})], { ids: ["a"] });
    expect(index.layout).toBe("sparse");
    expect(SPARSE_MAX_NONZERO_SHARE).toBeLessThan(1);
  });

  it("fills with zero-score rows, smallest id first, when fewer than k rows share a dimension", async () => {
    const index = new InMemoryVectorIndex(unused, { layout: "sparse" });
    const e = (d: number) => Array.from({ length: 8 }, (_, i) => (i === d ? 1 : 0));
    await index.addVectors(
      [e(0), e(1), e(2), e(3), e(0).map((x) => -x)],
      ["z", "b", "a", "c", "neg"].map((id) => doc(id, {})),
      { ids: ["z", "b", "a", "c", "neg"] },
    );
    const hits = shape(await index.similaritySearchVectorWithScore(e(0), 4));
    // "neg" shares the dimension but scores -1: every untouched row (score 0) ranks above it.
    expect(hits).toEqual([
      ["z", 1],
      ["a", 0],
      ["b", 0],
      ["c", 0],
    ]);
    expect(shape(await index.similaritySearchVectorWithScore(new Array(8).fill(0), 2))).toEqual([
      ["a", 0],
      ["b", 0],
    ]);
  });

  it("gives the exhaustive search's results on random corpora, through upserts, deletes and compaction", async () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const random = rng(seed);
      const dim = [16, 64, 300, 2048][seed % 4];
      // Few nonzeros on a small vocabulary: many shared dimensions, ties and exact duplicates.
      const nonzero = 1 + Math.floor(random() * Math.min(12, dim / 5));
      const vec = (): number[] => {
        const v = new Array<number>(dim).fill(0);
        const spread = 1 + Math.floor(random() * dim);
        for (let j = 0; j < nonzero; j++) {
          const d = Math.floor(random() * spread);
          v[d] = random() < 0.2 ? 1 : Math.round((random() * 2 - 1) * 8) / 8;
        }
        return random() < 0.03 ? new Array<number>(dim).fill(0) : v;
      };
      const dense = new InMemoryVectorIndex(unused, { layout: "dense", initialCapacity: 2 });
      const sparse = new InMemoryVectorIndex(unused, { layout: "sparse" });
      const pool = 300;
      for (let round = 0; round < 5; round++) {
        const ids = Array.from({ length: 200 }, () => `id${Math.floor(random() * pool)}`);
        const vectors = ids.map(() => vec());
        const docs = ids.map((id) => doc(id, { partition: `p${Math.floor(random() * 3)}` }));
        await dense.addVectors(vectors, docs, { ids });
        await sparse.addVectors(vectors, docs, { ids });
        const gone = Array.from({ length: 40 + round * 30 }, () => `id${Math.floor(random() * pool)}`);
        await dense.delete({ ids: gone });
        await sparse.delete({ ids: gone });
        if (round === 3) {
          await dense.delete({ filter: { partition: "p2" } });
          await sparse.delete({ filter: { partition: "p2" } });
        }
        expect(sparse.size).toBe(dense.size);
        expect(sparse.layout).toBe("sparse");
        for (let q = 0; q < 25; q++) {
          const query = vec().map((x) => x * (1 + random()));
          const k = [1, 5, 10, 400][q % 4];
          const filter: InMemoryFilter | undefined = [
            undefined,
            { partition: "p1" },
            { partition: ["p0", "p2"] },
            (d: DocumentInterface) => d.id!.endsWith("7"),
          ][q % 4];
          const got = await allThree(dense, sparse, query, k, filter);
          expect(got.length).toBeGreaterThan(0);
        }
      }
      // -0 and 0 are the same entry (a sparse vector keeps neither).
      const plain = (v: number[] | undefined) => v?.map((x) => x + 0);
      for (const id of ["id1", "id2", "id3"]) expect(plain(sparse.getVector(id))).toEqual(plain(dense.getVector(id)));
    }
  });

  it("a blended vector (sparse lexical part, dense semantic part) gives the same results", async () => {
    const dense = new (class implements EmbeddingsInterface {
      async embedDocuments(texts: string[]) {
        return texts.map((t) => this.vector(t));
      }
      async embedQuery(t: string) {
        return this.vector(t);
      }
      private vector(t: string): number[] {
        const random = rng(t.length * 31 + t.charCodeAt(0));
        return Array.from({ length: 16 }, () => random() * 2 - 1);
      }
    })();
    const texts = ["book a hotel", "find flights to rome", "weather in paris", "send an email", "hotel in rome"];
    const lexical = new LexicalEmbeddings({ dimension: 512 }).fit(texts);
    const blend = new BlendedEmbeddings({
      parts: [
        { embeddings: lexical, weight: 0.7 },
        { embeddings: dense, weight: 0.3 },
      ],
    });
    const a = new InMemoryVectorIndex(blend, { layout: "dense" });
    const b = new InMemoryVectorIndex(blend, { layout: "sparse" });
    const vectors = await blend.embedDocuments(texts);
    const docs = texts.map((t, i) => doc(`t${i}`, {}));
    await a.addVectors(vectors, docs);
    await b.addVectors(vectors, docs);
    for (const q of ["hotel rome", "email", "rain in paris", "nothing matches zzz"]) {
      await allThree(a, b, await blend.embedQuery(q), 3);
    }
  });
});

describe("searchCost", () => {
  it("counts the lists, postings and rows a search walks, and what a max-score walk could leave out", async () => {
    const index = new InMemoryVectorIndex(unused, { layout: "sparse" });
    // Rows a-c share dimension 0 (a common term, small values); a and b also hold a rare term each.
    await index.addVectors(
      [
        [0.3, 1, 0, 0, 0, 0, 0, 0],
        [0.3, 0, 1, 0, 0, 0, 0, 0],
        [1, 0, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 1, 0, 0, 0, 0],
      ],
      ["a", "b", "c", "d"].map((id) => doc(id, {})),
      { ids: ["a", "b", "c", "d"] },
    );
    const query = [0.1, 1, 0, 0, 0, 0, 0, 0];
    const cost = await index.searchCost(query, 1);
    expect(cost.lists).toBe(2);
    expect(cost.postings).toBe(4); // dimension 0: a, b, c; dimension 1: a
    expect(cost.rowsMet).toBe(3); // d shares no dimension
    const [[best, kth]] = await index.similaritySearchVectorWithScore(query, 1);
    expect(best.id).toBe("a");
    expect(cost.kthScore).toBe(kth);
    // Rows are stored unit length. Dimension 0 can add at most 0.1 / |q| × 1 (row c's entry) to a
    // score, less than a's score: a max-score walk could skip its 3 postings; dimension 1's bound
    // (1 / |q| × a's entry) alone exceeds it.
    const w = 1 / Math.hypot(0.1, 1);
    expect(cost.boundSum).toBeCloseTo(0.1 * w + w / Math.hypot(0.3, 1), 6);
    expect(cost.skippablePostings).toBe(3);
    // A second row id replacing the first leaves a dead slot that no longer counts as met.
    await index.addVectors([[0, 0, 0, 1, 0, 0, 0, 0]], [doc("c", {})], { ids: ["c"] });
    expect((await index.searchCost(query, 1)).rowsMet).toBe(2);
  });

  it("is refused in the dense layout", async () => {
    const index = new InMemoryVectorIndex(unused, { layout: "dense" });
    await index.addVectors([[1, 0, 0, 0, 0, 0, 0, 0]], [doc("a", {})], { ids: ["a"] });
    await expect(index.searchCost([1, 0, 0, 0, 0, 0, 0, 0], 1)).rejects.toThrow(/sparse layout only/);
  });
});

const metatool = metaToolUnavailableReason();
if (metatool !== null) console.warn(`skipped: ${metatool}`);

describe.skipIf(metatool !== null)("inverted search on the MetaTool tools", () => {
  const readJsonl = <T>(file: string): T[] =>
    readFileSync(`${METATOOL_DIR}/${file}`, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as T);

  it("ranks every request exactly as the exhaustive scan does (199 tools, 1,000 requests)", async () => {
    const tools = readJsonl<{ name: string; description: string }>("tools.jsonl");
    const queries = readJsonl<{ query: string }>("queries.jsonl")
      .filter((_, i) => i % 17 === 0)
      .slice(0, 1000);
    const texts = tools.map((t) => `${t.name} ${t.description}`);
    const embeddings = new LexicalEmbeddings().fit(texts);
    const vectors = await embeddings.embedDocuments(texts);
    const docs = tools.map((t, i) => doc(t.name, { partition: `p${i % 2}` }));
    const dense = new InMemoryVectorIndex(embeddings, { layout: "dense" });
    const sparse = new InMemoryVectorIndex(embeddings);
    await dense.addVectors(vectors, docs);
    await sparse.addVectors(vectors, docs);
    expect(sparse.layout).toBe("sparse");
    for (const [i, { query }] of queries.entries()) {
      const q = await embeddings.embedQuery(query);
      await allThree(dense, sparse, q, 5, i % 3 === 0 ? { partition: "p1" } : undefined);
    }
  });

  it("ToolIndex routes the MetaTool requests identically over the inverted and the dense store", async () => {
    const tools = readJsonl<{ name: string; description: string }>("tools.jsonl");
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, tools, { partition: "p" });
    const inverted = new ToolIndex({ ledger });
    const scanned = new ToolIndex({ ledger, vectorStore: (e) => new InMemoryVectorIndex(e, { layout: "dense" }) });
    expect((inverted.store as InMemoryVectorIndex).layout).toBe("sparse");
    const queries = readJsonl<{ query: string }>("queries.jsonl").filter((_, i) => i % 43 === 0);
    for (const { query } of queries) {
      expect(await inverted.route("p", query, { k: 5 })).toEqual(await scanned.route("p", query, { k: 5 }));
    }
    expect((inverted.store as InMemoryVectorIndex).layout).toBe("sparse");
  });
});
