import { readFileSync } from "node:fs";
import path from "node:path";
import { Document, type DocumentInterface } from "@langchain/core/documents";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { seededRandom as rng } from "../../src/internal.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { CappedVectorCache } from "../../src/routing/card-vectors.js";
import { LexicalEmbeddings } from "../../src/routing/lexical-embeddings.js";
import { type FirstPassOptions, InMemoryVectorIndex } from "../../src/routing/memory-vector-store.js";
import { ToolRouter } from "../../src/routing/router.js";
import { sparseOf } from "../../src/routing/sparse-vector.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { METATOOL_DIR, metaToolUnavailableReason } from "../helpers/metatool.js";

const unused = new LexicalEmbeddings({ dimension: 8 });
const doc = (id: string) => new Document({ pageContent: id, metadata: { partition: "p" }, id });
const ids = (hits: [DocumentInterface, number][]) => hits.map(([d]) => d.id);
const shape = (hits: [DocumentInterface, number][]) => hits.map(([d, s]) => [d.id, s] as const);

/**
 * Rows where the candidate pass and the exact scan can differ: dimensions 1 and 2 are common (on
 * more rows than the pass's cap), and the best row for a query on both ("both") is the top entry
 * of neither list, so a pass that walks one entry per common list never meets it.
 */
function hiddenBest(): { vectors: number[][]; names: string[] } {
  const v = (entries: Record<number, number>) => Array.from({ length: 8 }, (_, d) => entries[d] ?? 0);
  return {
    names: ["only1", "only2", "both", "weak1", "weak2", "rare"],
    vectors: [
      v({ 1: 0.8, 5: 0.6 }),
      v({ 2: 0.8, 6: 0.6 }),
      v({ 1: 0.6, 2: 0.6, 7: 0.53 }),
      v({ 1: 0.1, 2: 0.1, 3: 0.99 }),
      v({ 1: 0.1, 2: 0.1, 4: 0.99 }),
      v({ 0: 1 }),
    ],
  };
}

async function store(options: ConstructorParameters<typeof InMemoryVectorIndex>[1]): Promise<InMemoryVectorIndex> {
  const index = new InMemoryVectorIndex(unused, options);
  const { vectors, names } = hiddenBest();
  await index.addVectors(vectors, names.map(doc), { ids: names });
  return index;
}

/** One posting of each common list, one tool rescored, no deeper round. */
const narrow = { termRows: 2, termShare: 0, commonPostings: 2, rescore: 1, postingBudget: 2 };
const onBoth = [0, 1, 1, 0, 0, 0, 0, 0];

describe("the candidate pass of the in-memory index", () => {
  it("can miss the exact best on a fixture built for it, and says it answered without proof", async () => {
    const index = await store({ firstPass: narrow });
    const exact = await index.exhaustiveSearchVectorWithScore(onBoth, 1);
    expect(ids(exact)).toEqual(["both"]);
    // The pass meets only1 and only2 (each the top entry of one common list) and rescores one.
    expect(ids(await index.similaritySearchVectorWithScore(onBoth, 1))).toEqual(["only1"]);
    expect(index.searchStats).toMatchObject({ unproven: 1, proven: 0, fallbacks: 0 });
  });

  it("walks deeper when its bound cannot prove the answer, and then equals the exact scan (proven)", async () => {
    // The same narrow first round, with room for deeper ones: the tool that scores high only
    // through the two common terms is met once their lists are walked further.
    const index = await store({ firstPass: { ...narrow, postingBudget: 1_000 } });
    for (const k of [1, 2, 3]) {
      expect(shape(await index.similaritySearchVectorWithScore(onBoth, k))).toEqual(
        shape(await index.exhaustiveSearchVectorWithScore(onBoth, k)),
      );
    }
    expect(ids(await index.similaritySearchVectorWithScore(onBoth, 1))).toEqual(["both"]);
    const stats = index.searchStats;
    expect(stats.deepened).toBeGreaterThan(0);
    expect(stats.proven).toBeGreaterThan(0);
    expect(stats.unproven).toBe(0);
  });

  it("falls back to the exact walk when its bound cannot prove the answer (requireProof)", async () => {
    const index = await store({ firstPass: { ...narrow, requireProof: true } });
    const got = shape(await index.similaritySearchVectorWithScore(onBoth, 2));
    expect(got).toEqual(shape(await index.exhaustiveSearchVectorWithScore(onBoth, 2)));
    expect(got[0][0]).toBe("both");
    expect(index.searchStats).toMatchObject({ fallbacks: 1, exact: 1, unproven: 0 });
  });

  it("answers from the candidates when the bound proves them exact", async () => {
    const index = await store({ firstPass: { ...narrow, requireProof: true } });
    // Mostly the rare dimension: what the common lists' unwalked entries can add (0.1 each)
    // stays below the best score.
    const query = [1, 0.05, 0.05, 0, 0, 0, 0, 0];
    const got = shape(await index.similaritySearchVectorWithScore(query, 1));
    expect(got).toEqual(shape(await index.exhaustiveSearchVectorWithScore(query, 1)));
    expect(index.searchStats).toMatchObject({ proven: 1, fallbacks: 0, exact: 0 });
  });

  it("scores only the rows a filter keeps when they are at most k, as every other search would answer", async () => {
    // Two partitions in one store: "few" (6 rows) beside "many" (200 rows sharing the common terms).
    const random = rng(7);
    const dim = 8;
    const vectors: number[][] = [];
    const docs: Document[] = [];
    for (let i = 0; i < 206; i++) {
      vectors.push(Array.from({ length: dim }, (_, d) => (d < 3 || random() < 0.3 ? random() : 0)));
      docs.push(new Document({ pageContent: `r${i}`, metadata: { partition: i < 6 ? "few" : "many" }, id: `r${i}` }));
    }
    for (const firstPass of [narrow, {}, false as const]) {
      const index = new InMemoryVectorIndex(unused, { firstPass, layout: "sparse" });
      await index.addVectors(vectors, docs, { ids: docs.map((d) => d.id!) });
      // A tie with a row of the other partition, and exact zeros, ranked as the scan ranks them.
      for (const query of [onBoth, [0, 0, 0, 0, 0, 0, 0, 1], Array.from({ length: dim }, () => random())]) {
        for (const k of [6, 9]) {
          const got = await index.similaritySearchVectorWithScore(query, k, { partition: "few" });
          expect(shape(got)).toEqual(
            shape(await index.exhaustiveSearchVectorWithScore(query, k, { partition: "few" })),
          );
          expect(got).toHaveLength(6);
        }
        // k below the rows kept: the usual searches.
        expect(shape(await index.similaritySearchVectorWithScore(query, 5, { partition: "few" }))).toHaveLength(5);
      }
      expect(index.searchStats.fewKept).toBe(6);
      expect(
        (await index.searchToolHits(onBoth, 6, { partition: "few" })).map(([, score, text]) => [text, score]),
      ).toEqual(
        (await index.similaritySearchVectorWithScore(onBoth, 6, { partition: "few" })).map(([d, score]) => [
          d.pageContent,
          score,
        ]),
      );
    }
  });

  it("walks every list when every term is selective (small indexes: exact)", async () => {
    const index = await store({});
    expect(ids(await index.similaritySearchVectorWithScore(onBoth, 1))).toEqual(["both"]);
    expect(index.searchStats).toMatchObject({ exact: 1, proven: 0, unproven: 0 });
  });

  it("with requireProof, equals the exhaustive scan on random corpora, and proves part of them", async () => {
    let proven = 0;
    for (const seed of [1, 2, 3]) {
      const random = rng(seed);
      const dim = 256;
      const index = new InMemoryVectorIndex(unused, {
        firstPass: { termRows: 20, termShare: 0, commonPostings: 16, rescore: 16, requireProof: true },
      });
      const vec = (n: number) => {
        const v = new Array<number>(dim).fill(0);
        for (let j = 0; j < n; j++) v[Math.floor(random() ** 3 * dim)] = random() * 2 - 1;
        return v;
      };
      const names = Array.from({ length: 600 }, (_, i) => `r${i}`);
      await index.addSparseVectors(
        names.map(() => sparseOf(vec(4 + Math.floor(random() * 12)))),
        names.map(doc),
        { ids: names },
      );
      for (let q = 0; q < 100; q++) {
        const query = sparseOf(vec(1 + Math.floor(random() * 6)));
        expect(shape(await index.similaritySearchSparseWithScore(query, 5))).toEqual(
          shape(await index.exhaustiveSearchVectorWithScore(query, 5)),
        );
      }
      proven += index.searchStats.proven;
    }
    expect(proven).toBeGreaterThan(0);
  });

  it("without a deeper round, equals the exhaustive scan on made-up-word tools whose terms are nearly all common", async () => {
    // Words of 2-4 syllables out of 12: every character n-gram, and the frequent words, sit on more
    // tools than the cap, so the pass walks a slice of those lists and answers without proof.
    const syllables = ["ka", "lo", "mi", "ne", "tor", "sha", "vel", "qu", "ar", "zen", "pol", "dri"];
    const random = rng(5);
    const vocabulary = Array.from({ length: 3_000 }, () =>
      Array.from({ length: 2 + Math.floor(random() * 3) }, () => syllables[Math.floor(random() * 12)]).join(""),
    );
    // Zipf-like: word r drawn with weight 1/r.
    const word = () => vocabulary[Math.floor(vocabulary.length ** random()) - 1];
    const text = (min: number, spread: number) =>
      Array.from({ length: min + Math.floor(random() * spread) }, word).join(" ");
    const tools = Array.from({ length: 3_000 }, () => text(12, 20));
    const embeddings = new LexicalEmbeddings().fit(tools);
    const index = new InMemoryVectorIndex(embeddings, {
      firstPass: { termRows: 30, termShare: 0, commonPostings: 6_000, rescore: 256, postingBudget: 6_000 },
    });
    const names = tools.map((_, i) => `t${i}`);
    await index.addSparseVectors(
      tools.map((t) => embeddings.embedSparse(t)),
      names.map(doc),
      { ids: names },
    );
    let same = 0;
    const requests = 200;
    for (let q = 0; q < requests; q++) {
      const query = embeddings.embedSparse(text(5, 8));
      const got = shape(await index.similaritySearchSparseWithScore(query, 5));
      if (JSON.stringify(got) === JSON.stringify(shape(await index.exhaustiveSearchVectorWithScore(query, 5)))) same++;
    }
    const stats = index.searchStats;
    expect(stats.deepened).toBe(0);
    expect(stats.unproven).toBeGreaterThan(requests / 2);
    expect(same / requests).toBeGreaterThanOrEqual(0.99);
  });

  it("answers a write after a settle exactly as over lists put in order (a one-card refresh)", async () => {
    const syllables = ["ka", "lo", "mi", "ne", "tor", "sha", "vel", "qu", "ar", "zen", "pol", "dri"];
    const random = rng(9);
    const vocabulary = Array.from({ length: 2_000 }, () =>
      Array.from({ length: 2 + Math.floor(random() * 3) }, () => syllables[Math.floor(random() * 12)]).join(""),
    );
    const word = () => vocabulary[Math.floor(vocabulary.length ** random()) - 1];
    const text = (min: number, spread: number) =>
      Array.from({ length: min + Math.floor(random() * spread) }, word).join(" ");
    const tools = Array.from({ length: 2_000 }, () => text(12, 20));
    const embeddings = new LexicalEmbeddings().fit(tools);
    // A narrow pass (few postings, few tools rescored): which entries it walks decides its answer.
    const firstPass = { termRows: 30, termShare: 0, commonPostings: 2_000, rescore: 32, postingBudget: 2_000 };
    // Settled as ToolIndex settles after each write, and, beside it, with every list put in order.
    const written = new InMemoryVectorIndex(embeddings, { firstPass });
    const ordered = new InMemoryVectorIndex(embeddings, { firstPass });
    const write = async (texts: string[], names: string[]) => {
      for (const index of [written, ordered]) {
        await index.addSparseVectors(
          texts.map((t) => embeddings.embedSparse(t)),
          names.map(doc),
          { ids: names },
        );
      }
      written.settle();
      ordered.settle(true);
    };
    await write(
      tools,
      tools.map((_, i) => `t${i}`),
    );
    for (let round = 0; round < 12; round++) {
      // One tool's text changed (its description gained words), now and then a new tool.
      const changed = `t${Math.floor(random() * tools.length)}`;
      const texts = [text(20, 10)];
      const names = [changed];
      if (round % 4 === 0) {
        texts.push(text(20, 10));
        names.push(`new${round}`);
      }
      await write(texts, names);
      if (round % 3 === 2) continue; // Writes with no search between them leave longer tails.
      // Requests on the new texts' words (their rows now lead, if the walk meets them) and others.
      const requests = [...texts.map((t) => t.split(" ").slice(0, 6).join(" ")), text(5, 8), text(5, 8)];
      for (const request of requests) {
        const query = embeddings.embedSparse(request);
        for (const k of [1, 5]) {
          expect(shape(await written.similaritySearchSparseWithScore(query, k))).toEqual(
            shape(await ordered.similaritySearchSparseWithScore(query, k)),
          );
        }
      }
    }
    const stats = written.searchStats;
    expect(stats).toEqual(ordered.searchStats);
    expect(stats.proven + stats.unproven).toBeGreaterThan(stats.exact);
  });

  it.skipIf(metaToolUnavailableReason() !== null)(
    "agrees with the exhaustive scan on MetaTool requests over the 199 real tools and 1,800 synthetic ones",
    async () => {
      const readJsonl = <T>(file: string): T[] =>
        readFileSync(path.join(METATOOL_DIR, file), "utf8")
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l) => JSON.parse(l) as T);
      const tools = readJsonl<{ name: string; description: string }>("tools.jsonl");
      const words = tools.flatMap((t) => t.description.split(/\s+/).filter(Boolean));
      const random = rng(7);
      const synthetic = Array.from({ length: 1_800 }, (_, i) => ({
        name: `synthetic_${i}`,
        description: Array.from(
          { length: 12 + Math.floor(random() * 20) },
          () => words[Math.floor(random() * words.length)],
        ).join(" "),
      }));
      const ledger = new Ledger(new InMemoryStore());
      await registerTools(ledger, [...tools, ...synthetic], { partition: "p" });
      // Caps far below the defaults (in proportion to the tools, 160 entries of 2,000 as 1,000 of
      // 12,500), so that most of a request's terms are common here.
      const index = new ToolIndex({
        ledger,
        vectorStore: (e) =>
          new InMemoryVectorIndex(e, { firstPass: { termRows: 40, termShare: 0, commonPostings: 1000, rescore: 256 } }),
      });
      const router = new ToolRouter({ index, partition: "p", failureSink: () => undefined });
      const requests = readJsonl<{ query: string }>("queries.jsonl").filter((_, i) => i % 40 === 0);
      const memory = index.store as InMemoryVectorIndex;
      let same = 0;
      for (const { query } of requests) {
        const routed = await router.route(query);
        const exact = await memory.exhaustiveSearchVectorWithScore(await index.embedQuery("p", query), 5, {
          partition: "p",
        });
        if (JSON.stringify(routed.offered.map((o) => o.tool)) === JSON.stringify(exact.map(([d]) => d.metadata.tool)))
          same++;
      }
      const stats = memory.searchStats;
      expect(stats.proven + stats.unproven).toBeGreaterThan(requests.length / 2);
      expect(same / requests.length).toBeGreaterThanOrEqual(0.99);
    },
    // Registering and embedding 2,000 tools and 150 exhaustive scans: minutes on a loaded machine.
    300_000,
  );
});

/**
 * Rows with a sparse part (words, dimensions 0-63) and a dense part (dimensions 64-191, nonzero on
 * every row), as a lexical + sentence-encoder blend gives them; the last row ("twin") shares no
 * word with the query `dense` makes, only its dense part (the same as the query's).
 */
function blendRows(): { vectors: number[][]; names: string[]; query: number[] } {
  const random = rng(5);
  const rows = 300;
  const denseOf = () => Array.from({ length: 128 }, () => random() * 2 - 1);
  const vectors: number[][] = [];
  for (let r = 0; r < rows; r++) {
    const words = Array.from({ length: 64 }, (_, d) => (d % 8 === r % 8 || random() < 0.05 ? random() : 0));
    vectors.push([...words, ...denseOf().map((x) => 0.4 * x)]);
  }
  const twinDense = denseOf();
  // Words 0, 8, 16, ... are on a row in eight; the twin has only word 1.
  vectors.push([...Array.from({ length: 64 }, (_, d) => (d === 1 ? 1 : 0)), ...twinDense]);
  const query = [...Array.from({ length: 64 }, (_, d) => (d % 8 === 0 ? 0.5 : 0)), ...twinDense];
  return { vectors, names: vectors.map((_, i) => (i === rows ? "twin" : `r${i}`)), query };
}

describe("the candidate pass with a dense part (wide terms)", () => {
  async function blendStore(firstPass: FirstPassOptions) {
    const index = new InMemoryVectorIndex(unused, { layout: "sparse", firstPass });
    const { vectors, names } = blendRows();
    await index.addVectors(vectors, names.map(doc), { ids: names });
    return index;
  }
  // Every term common (cap 8 rows), the dense part's 128 terms wide (on every row).
  const caps = { termRows: 8, termShare: 0, commonPostings: 400, rescore: 16, wideRescore: 32 };

  it("walks none of the dense part's terms: they are scored over the candidates only, exactly", async () => {
    const index = await blendStore(caps);
    const { query } = blendRows();
    const exact = new Map(shape(await index.exhaustiveSearchVectorWithScore(query, 301)));
    // The twin is the exact best (its dense part is the query's) but shares no word with it.
    expect([...exact.keys()][0]).toBe("twin");
    const got = shape(await index.similaritySearchVectorWithScore(query, 5));
    expect(got.map(([id]) => id)).not.toContain("twin");
    // Every row answered is a candidate of the words, rescored exactly (to the bit).
    for (const [id, score] of got) expect(score).toBe(exact.get(id));
    expect(index.searchStats).toMatchObject({ unproven: 1, proven: 0, fallbacks: 0 });
  });

  it("walks them as any common term with wideTerms 0, and answers exactly with requireProof", async () => {
    const walked = await blendStore({ ...caps, wideTerms: 0, commonPostings: 50_000, postingBudget: 50_000 });
    const { query } = blendRows();
    expect(shape(await walked.similaritySearchVectorWithScore(query, 1))[0][0]).toBe("twin");
    const proven = await blendStore({ ...caps, requireProof: true });
    const exact = shape(await proven.exhaustiveSearchVectorWithScore(query, 5));
    expect(shape(await proven.similaritySearchVectorWithScore(query, 5))).toEqual(exact);
    expect(proven.searchStats.fallbacks).toBe(1);
  });

  it("leaves a request with fewer wide terms than wideTerms to the walk of every common term", async () => {
    const index = await blendStore({ ...caps, wideTerms: 129, commonPostings: 50_000, postingBudget: 50_000 });
    const { query } = blendRows();
    expect(shape(await index.similaritySearchVectorWithScore(query, 1))[0][0]).toBe("twin");
  });
});

describe("memory held by the routing index", () => {
  it("keeps the tool-part cache under its cap whatever the batch", () => {
    const cache = new CappedVectorCache(100);
    for (let i = 0; i < 50; i++)
      cache.set(`t${i}`, sparseOf(Array.from({ length: 40 }, (_, d) => (d % 4 === i % 4 ? 1 : 0))));
    expect(cache.size).toBeLessThanOrEqual(100);
    expect(cache.get("t49")).toBeDefined();
    expect(cache.get("t0")).toBeUndefined();
    cache.set("huge", new Array<number>(101).fill(1));
    expect(cache.get("huge")).toBeUndefined();
  });

  it("holds lexical cards sparse, and ToolRouter.route neither lists nor sorts the tools", async () => {
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(
      ledger,
      Array.from({ length: 30 }, (_, i) => ({ name: `tool_${i}`, description: `does thing number ${i} for orders` })),
    );
    const index = new ToolIndex({ ledger });
    const router = new ToolRouter({ index, alwaysInclude: ["tool_0"], failureSink: () => undefined });
    await router.route("warm up");
    index.indexedTools = () => {
      throw new Error("listed every tool");
    };
    const routed = await router.route("thing number 7");
    expect(routed.offered[0].tool).toBe("tool_7");
    expect(routed.allSent).toBe(false);
    const store = index.store as InMemoryVectorIndex;
    expect(store.layout).toBe("sparse");
    const [[hit]] = await store.similaritySearchVectorWithScore(
      await index.embedRequest("default", "thing number 7"),
      1,
    );
    const vector = store.getVector(hit.id!)!;
    expect(vector.filter((x) => x !== 0).length).toBeLessThan(200);
  });
});
