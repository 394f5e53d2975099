import { Document } from "@langchain/core/documents";
import { describe, expect, it } from "vitest";
import { InvalidInput } from "../../src/errors.js";
import { LexicalEmbeddings } from "../../src/routing/lexical-embeddings.js";
import { InMemoryVectorIndex, matchesMetadataFilter } from "../../src/routing/memory-vector-store.js";
import { seededRandom as rng } from "../../src/internal.js";

const cosine = (a: number[], b: number[]) => {
  let d = 0,
    na = 0,
    nb = 0;
  for (let i = 0; i < a.length; i++) {
    d += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : d / Math.sqrt(na * nb);
};

const doc = (pageContent: string, metadata: Record<string, unknown> = {}) => new Document({ pageContent, metadata });

describe("InMemoryVectorIndex", () => {
  const embeddings = new LexicalEmbeddings({ dimension: 256 });

  it("reports its type", () => {
    expect(new InMemoryVectorIndex(embeddings)._vectorstoreType()).toBe("tool-lessons-memory");
  });

  it("returns cosine similarity, higher first", async () => {
    const index = new InMemoryVectorIndex(embeddings);
    await index.addVectors(
      [
        [1, 0],
        [0.6, 0.8],
        [-1, 0],
      ],
      [doc("a"), doc("b"), doc("c")],
      { ids: ["a", "b", "c"] },
    );
    const hits = await index.similaritySearchVectorWithScore([2, 0], 3);
    expect(hits.map(([d]) => d.id)).toEqual(["a", "b", "c"]);
    expect(hits.map(([, s]) => s)).toEqual([expect.closeTo(1, 6), expect.closeTo(0.6, 6), expect.closeTo(-1, 6)]);
  });

  it("upserts by id: the same id replaces text, metadata and vector", async () => {
    const index = new InMemoryVectorIndex(embeddings);
    await index.addVectors(
      [
        [1, 0],
        [0, 1],
      ],
      [doc("old", { v: 1, gone: true }), doc("other")],
      { ids: ["x", "y"] },
    );
    await index.addVectors([[0, 1]], [doc("new", { v: 2 })], { ids: ["x"] });
    expect(await index.count()).toBe(2);
    const [x] = await index.getByIds(["x"]);
    expect(x.pageContent).toBe("new");
    expect(x.metadata).toEqual({ v: 2 });
    const hits = await index.similaritySearchVectorWithScore([0, 1], 2);
    expect(hits.map(([, s]) => s)).toEqual([expect.closeTo(1, 6), expect.closeTo(1, 6)]);
  });

  it("takes ids from options, then document.id, else makes one", async () => {
    const index = new InMemoryVectorIndex(embeddings);
    const ids = await index.addDocuments([new Document({ pageContent: "hotel", id: "doc-id" }), doc("flight")]);
    expect(ids[0]).toBe("doc-id");
    expect(ids[1]).toMatch(/^[0-9a-f-]{36}$/);
    await expect(index.addDocuments([doc("a")], { ids: ["1", "2"] })).rejects.toThrow(InvalidInput);
  });

  it("refuses candidate-pass options out of range with a typed error naming the option", () => {
    const make = (firstPass: Record<string, unknown>) => () => new InMemoryVectorIndex(embeddings, { firstPass });
    expect(make({ wideShare: 2 })).toThrow(/firstPass\.wideShare must be a share between 0 and 1; got 2/);
    expect(make({ wideRescore: Number.NaN })).toThrow(/firstPass\.wideRescore must be a whole number/);
    expect(make({ termRows: -1 })).toThrow(InvalidInput);
    expect(make({ rescore: 0 })).toThrow(/firstPass\.rescore must be a whole number of at least 1/);
    expect(make({ requireProof: "yes" })).toThrow(InvalidInput);
    // Unset fields take their defaults; the edges are allowed.
    expect(make({ wideTerms: 0, wideShare: 1, termShare: 0, rescore: undefined })).not.toThrow();
  });

  it("refuses a vector of another dimension", async () => {
    const index = new InMemoryVectorIndex(embeddings);
    await index.addVectors([[1, 0, 0]], [doc("a")]);
    await expect(index.addVectors([[1, 0]], [doc("b")])).rejects.toThrow(InvalidInput);
    await expect(index.similaritySearchVectorWithScore([1, 0], 1)).rejects.toThrow(InvalidInput);
  });

  it("deletes by ids and by filter, and keeps the rest searchable", async () => {
    const index = new InMemoryVectorIndex(embeddings, { initialCapacity: 1 });
    const texts = ["book a hotel", "find flights", "weather today", "send an email", "stock price"];
    await index.addDocuments(
      texts.map((t, i) => doc(t, { partition: i % 2 === 0 ? "p1" : "p2" })),
      {
        ids: texts.map((_, i) => `t${i}`),
      },
    );
    await index.delete({ ids: ["t0", "missing"] });
    expect(await index.count()).toBe(4);
    expect(await index.getByIds(["t0", "t1"])).toHaveLength(1);
    await index.delete({ filter: { partition: "p2" } });
    expect((await index.getByIds(["t1", "t2", "t3", "t4"])).map((d) => d.id)).toEqual(["t2", "t4"]);
    const [[top]] = await index.similaritySearchWithScore("what's the weather", 1);
    expect(top.id).toBe("t2");
    await index.delete({ filter: (d) => d.pageContent.includes("stock") });
    expect(await index.count()).toBe(1);
    await expect(index.delete({ filter: {} })).rejects.toThrow(InvalidInput);
    index.clear();
    expect(await index.count()).toBe(0);
    expect(await index.similaritySearchVectorWithScore([1, 0], 3)).toEqual([]);
  });

  it("filters by metadata equality (several keys, any-of arrays) and by predicate", async () => {
    const index = new InMemoryVectorIndex(embeddings);
    const vectors = [
      [1, 0],
      [0.9, 0.1],
      [0.8, 0.2],
      [0.7, 0.3],
    ];
    const docs = [
      doc("a", { partition: "p1", kind: "tool" }),
      doc("b", { partition: "p2", kind: "tool" }),
      doc("c", { partition: "p1", kind: "lesson" }),
      doc("d", { partition: "p2", kind: "lesson" }),
    ];
    await index.addVectors(vectors, docs, { ids: ["a", "b", "c", "d"] });
    const ids = async (f: Parameters<typeof index.similaritySearchVectorWithScore>[2]) =>
      (await index.similaritySearchVectorWithScore([1, 0], 10, f)).map(([d]) => d.id);
    expect(await ids({ partition: "p1" })).toEqual(["a", "c"]);
    expect(await ids({ partition: "p2", kind: "lesson" })).toEqual(["d"]);
    expect(await ids({ kind: ["tool", "lesson"], partition: "p2" })).toEqual(["b", "d"]);
    expect(await ids({ partition: "p3" })).toEqual([]);
    expect(await ids((d) => d.pageContent !== "a")).toEqual(["b", "c", "d"]);
    expect(await index.count({ kind: "tool" })).toBe(2);
  });

  it("returns copies: changing a result does not change the index", async () => {
    const index = new InMemoryVectorIndex(embeddings);
    await index.addVectors([[1]], [doc("a", { tag: "x" })], { ids: ["a"] });
    const [[hit]] = await index.similaritySearchVectorWithScore([1], 1);
    hit.metadata.tag = "changed";
    expect((await index.getByIds(["a"]))[0].metadata.tag).toBe("x");
  });

  it("gives the same top-k as a brute-force sort, through growth, upserts and deletes", async () => {
    const random = rng(42);
    const dim = 24;
    const index = new InMemoryVectorIndex(embeddings, { initialCapacity: 4 });
    const truth = new Map<string, { v: number[]; p: string }>();
    const vec = () => Array.from({ length: dim }, () => (random() < 0.5 ? 0 : random() * 2 - 1));
    for (let round = 0; round < 6; round++) {
      const ids = Array.from({ length: 150 }, () => `id${Math.floor(random() * 400)}`);
      const vectors = ids.map(() => vec());
      const parts = ids.map(() => (random() < 0.5 ? "p1" : "p2"));
      await index.addVectors(
        vectors,
        ids.map((id, i) => doc(id, { partition: parts[i] })),
        { ids },
      );
      ids.forEach((id, i) => truth.set(id, { v: vectors[i], p: parts[i] }));
      const gone = [...truth.keys()].filter(() => random() < 0.1);
      await index.delete({ ids: gone });
      for (const id of gone) truth.delete(id);
      expect(await index.count()).toBe(truth.size);
      for (let q = 0; q < 10; q++) {
        const query = vec();
        const filter = q % 2 === 0 ? undefined : { partition: "p1" };
        const expected = [...truth.entries()]
          .filter(([, t]) => filter === undefined || t.p === filter.partition)
          .map(([id, t]) => ({ id, s: cosine(query, t.v) }))
          .sort((a, b) => b.s - a.s || (a.id < b.id ? -1 : 1))
          .slice(0, 7);
        const got = await index.similaritySearchVectorWithScore(query, 7, filter);
        expect(got.map(([, s]) => s)).toEqual(expected.map((e) => expect.closeTo(e.s, 4)));
        // Ids agree except where two scores tie within float32 rounding.
        got.forEach(([d], i) => {
          if (d.id !== expected[i].id) expect(Math.abs(got[i][1] - expected[i].s)).toBeLessThan(1e-5);
        });
      }
    }
  });

  it("works as a LangChain retriever", async () => {
    const index = await InMemoryVectorIndex.fromTexts(
      ["book a hotel room", "check the weather forecast", "send an email"],
      [{ tool: "book_hotel" }, { tool: "get_weather" }, { tool: "send_email" }],
      new LexicalEmbeddings(),
    );
    const docs = await index.asRetriever(1).invoke("will it rain tomorrow? weather please");
    expect(docs[0].metadata.tool).toBe("get_weather");
  });
});

describe("matchesMetadataFilter", () => {
  it("requires every key to match; arrays mean any of", () => {
    expect(matchesMetadataFilter({ a: 1, b: "x" }, { a: 1 })).toBe(true);
    expect(matchesMetadataFilter({ a: 1, b: "x" }, { a: 1, b: "y" })).toBe(false);
    expect(matchesMetadataFilter({ a: 1 }, { b: "x" })).toBe(false);
    expect(matchesMetadataFilter({ a: true }, { a: [false, true] })).toBe(true);
    expect(matchesMetadataFilter({ a: "1" }, { a: 1 })).toBe(false);
  });
});
