import { MemoryVectorStore } from "@langchain/classic/vectorstores/memory";
import type { DocumentInterface } from "@langchain/core/documents";
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { FakeVectorStore } from "@langchain/core/utils/testing";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { InvalidInput, ToolLessonsError, UnsupportedVectorStore } from "../../src/errors.js";
import { InMemoryVectorIndex, type InMemoryFilter } from "../../src/routing/memory-vector-store.js";
import { wordingPartition } from "../../src/routing/tool-index-ids.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import {
  checkVectorStore,
  scoreKindOfChromaSpace,
  type ScoreKind,
  toSimilarity,
} from "../../src/routing/vector-store-contract.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { TRAVEL_REQUESTS, TRAVEL_TOOLS } from "../helpers/travel-tools.js";

const TOOLS = TRAVEL_TOOLS;
const REQUESTS = TRAVEL_REQUESTS;

async function ledgerWithTools(): Promise<Ledger> {
  const ledger = new Ledger(new InMemoryStore());
  await registerTools(ledger, TOOLS, { partition: "p1" });
  return ledger;
}

/** What it threw, for assertions on the error's fields. */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

/**
 * The in-memory index behind a store that reports distances instead of similarities (and a
 * vector store type of its own, so nothing is detected): what a store like community Chroma does.
 */
class DistanceStore extends InMemoryVectorIndex {
  constructor(
    embeddings: EmbeddingsInterface,
    private readonly kind: Exclude<ScoreKind, "similarity">,
  ) {
    super(embeddings);
  }

  override _vectorstoreType(): string {
    return `test-${this.kind}`;
  }

  override async similaritySearchVectorWithScore(
    query: number[],
    k: number,
    filter?: InMemoryFilter,
  ): Promise<[DocumentInterface, number][]> {
    const hits = await super.similaritySearchVectorWithScore(query, k, filter);
    return hits.map(([doc, cos]) => [doc, this.kind === "cosine-distance" ? 1 - cos : 2 - 2 * cos]);
  }
}

/** A store that records every filter and delete it is given. */
class SpyStore extends InMemoryVectorIndex {
  readonly filters: unknown[] = [];
  readonly deletes: unknown[] = [];

  override async similaritySearchVectorWithScore(
    query: number[],
    k: number,
    filter?: InMemoryFilter,
  ): Promise<[DocumentInterface, number][]> {
    this.filters.push(filter);
    return super.similaritySearchVectorWithScore(query, k, filter);
  }

  override async delete(params: { ids?: string[]; filter?: InMemoryFilter } = {}): Promise<void> {
    this.deletes.push(params);
    return super.delete(params);
  }
}

async function ranks(index: ToolIndex): Promise<{ tool: string; score: number }[][]> {
  const out = [];
  for (const r of REQUESTS)
    out.push((await index.route("p1", r, { k: 5 })).map(({ tool, score }) => ({ tool, score })));
  return out;
}

describe("the VectorStore contract, checked when the index is built", () => {
  it("refuses core's FakeVectorStore at construction with UnsupportedVectorStore naming delete()", async () => {
    const ledger = await ledgerWithTools();
    const error = thrown(() => new ToolIndex({ ledger, vectorStore: (e) => new FakeVectorStore(e) }));
    expect(error).toBeInstanceOf(UnsupportedVectorStore);
    expect(error).toBeInstanceOf(InvalidInput);
    expect(error).toBeInstanceOf(ToolLessonsError);
    const refused = error as UnsupportedVectorStore;
    expect(refused.name).toBe("UnsupportedVectorStore");
    expect(refused.missing).toEqual(["delete"]);
    expect(refused.message).toMatch(/FakeVectorStore \(vector store type "memory"\): it does not implement delete\(\)/);
    // The message says what is needed and what to use instead.
    expect(refused.message).toMatch(/similaritySearchVectorWithScore\(query, k, \{ partition \}\)/);
    expect(refused.message).toMatch(/InMemoryVectorIndex/);
    expect(refused.context).toEqual({ store: "FakeVectorStore", type: "memory", missing: ["delete"] });
  });

  it("refuses LangChain's MemoryVectorStore the same way, saying it also appends instead of upserting", async () => {
    const ledger = await ledgerWithTools();
    const error = thrown(
      () => new ToolIndex({ ledger, vectorStore: (e) => new MemoryVectorStore(e) }),
    ) as UnsupportedVectorStore;
    expect(error).toBeInstanceOf(UnsupportedVectorStore);
    expect(error.missing).toEqual(["delete"]);
    expect(error.message).toMatch(/MemoryVectorStore .*delete\(\).*appends on every addVectors/);
  });

  it("names every missing method, not only the first", () => {
    const store = new InMemoryVectorIndex(new FakeEmbeddingsLike());
    Object.defineProperty(store, "similaritySearchVectorWithScore", { value: undefined });
    Object.defineProperty(store, "addVectors", { value: "not a function" });
    const error = thrown(() => checkVectorStore(store)) as UnsupportedVectorStore;
    expect(error.missing).toEqual(["addVectors", "similaritySearchVectorWithScore"]);
    expect(error.message).toMatch(/does not implement addVectors\(\), similaritySearchVectorWithScore\(\)/);
  });

  it("asks an unknown store to declare its scores, and takes the declaration", async () => {
    const ledger = await ledgerWithTools();
    const error = thrown(
      () => new ToolIndex({ ledger, vectorStore: (e) => new DistanceStore(e, "cosine-distance") }),
    ) as UnsupportedVectorStore;
    expect(error).toBeInstanceOf(UnsupportedVectorStore);
    expect(error.missing).toEqual(["scores"]);
    expect(error.message).toMatch(/cannot tell whether DistanceStore .* returns similarities or distances/);
    expect(error.message).toMatch(/scores: "similarity"/);
    expect(
      () =>
        new ToolIndex({
          ledger,
          vectorStore: (e) => new DistanceStore(e, "cosine-distance"),
          scores: "cosine-distance",
        }),
    ).not.toThrow();
  });

  it("refuses a scores value it does not know", () => {
    const store = new InMemoryVectorIndex(new FakeEmbeddingsLike());
    expect(() => checkVectorStore(store, "distance" as ScoreKind)).toThrow(InvalidInput);
    expect(() => checkVectorStore(store, "distance" as ScoreKind)).toThrow(
      /scores must be "auto", "similarity", "cosine-distance", "l2-distance"; got "distance"/,
    );
  });

  it("knows the package's own stores and community Chroma without a declaration", () => {
    expect(checkVectorStore(new InMemoryVectorIndex(new FakeEmbeddingsLike())).type).toBe("tool-lessons-memory");
    const chromaLike = Object.assign(Object.create(InMemoryVectorIndex.prototype) as InMemoryVectorIndex, {
      _vectorstoreType: () => "chroma",
    });
    expect(() => checkVectorStore(chromaLike)).not.toThrow();
  });

  it("reads a community Chroma collection's space: cosine and ip are 1 - cosine, l2 (the default) squared Euclidean", async () => {
    const chromaLike = (collection: unknown, collectionMetadata?: unknown) =>
      Object.assign(Object.create(InMemoryVectorIndex.prototype) as InMemoryVectorIndex, {
        _vectorstoreType: () => "chroma",
        ensureCollection: async () => collection,
        collectionMetadata,
      });
    expect(await checkVectorStore(chromaLike({ configuration: { hnsw: { space: "cosine" } } })).scoreKind()).toBe(
      "cosine-distance",
    );
    expect(await checkVectorStore(chromaLike({ configuration: { hnsw: { space: "ip" } } })).scoreKind()).toBe(
      "cosine-distance",
    );
    expect(await checkVectorStore(chromaLike({ configuration: { hnsw: { space: "l2" } } })).scoreKind()).toBe(
      "l2-distance",
    );
    expect(await checkVectorStore(chromaLike({ metadata: { "hnsw:space": "cosine" } })).scoreKind()).toBe(
      "cosine-distance",
    );
    expect(await checkVectorStore(chromaLike({}, { "hnsw:space": "cosine" })).scoreKind()).toBe("cosine-distance");
    expect(await checkVectorStore(chromaLike({})).scoreKind()).toBe("l2-distance");
    expect(scoreKindOfChromaSpace(undefined)).toBe("l2-distance");
  });

  it("turns distances into the cosine of unit vectors", () => {
    expect(toSimilarity("similarity", 0.8)).toBe(0.8);
    expect(toSimilarity("cosine-distance", 0.25)).toBeCloseTo(0.75, 12);
    // Unit vectors at cosine c are 2 - 2c apart, squared.
    expect(toSimilarity("l2-distance", 2 - 2 * 0.6)).toBeCloseTo(0.6, 12);
  });
});

describe("a distance store, declared, routes exactly like the in-memory index", () => {
  it.each(["cosine-distance", "l2-distance"] as const)("%s: same tools, ranks and scores", async (kind) => {
    const ledger = await ledgerWithTools();
    const reference = await ranks(new ToolIndex({ ledger }));
    const declared = await ranks(
      new ToolIndex({ ledger, vectorStore: (e) => new DistanceStore(e, kind), scores: kind }),
    );
    expect(declared.map((r) => r.map((o) => o.tool))).toEqual(reference.map((r) => r.map((o) => o.tool)));
    declared.flat().forEach((o, i) => expect(o.score).toBeCloseTo(reference.flat()[i].score, 6));
    expect(reference[0][0].tool).toBe("book_hotel");
  });

  it("read as similarities (the bug this contract prevents), its ranking comes out inverted", async () => {
    const ledger = await ledgerWithTools();
    const wrong = await ranks(
      new ToolIndex({ ledger, vectorStore: (e) => new DistanceStore(e, "cosine-distance"), scores: "similarity" }),
    );
    expect(wrong[0][0].tool).not.toBe("book_hotel");
  });
});

describe("what the index asks of a store", () => {
  it("filters and deletes by the one key `partition`; tools are deleted by id", async () => {
    const ledger = await ledgerWithTools();
    let spy: SpyStore | undefined;
    const index = new ToolIndex({
      ledger,
      mode: "examples",
      // Shared embeddings: no refit (a reindex) on change, so the incremental path runs.
      embeddings: new FakeEmbeddingsLike(),
      vectorStore: (e) => (spy = new SpyStore(e)),
    });
    await ranks(index);
    const card = (await ledger.getCard("p1", "track_package"))!;
    const two = await ledger.putCard({
      ...card,
      learned: {
        ...card.learned,
        examples: [
          { text: "where is my parcel now", source: "learned", addedAt: 1 },
          { text: "parcel delivery status", source: "learned", addedAt: 2 },
        ],
      },
    });
    await index.upsertCards("p1", [two]);
    expect(await spy!.count({ tool: "track_package" })).toBe(3);
    // Fewer parts: the spare one goes by id.
    const one = await ledger.putCard({
      ...two,
      learned: { ...two.learned, examples: two.learned.examples.slice(0, 1) },
    });
    await index.upsertCards("p1", [one]);
    expect(await spy!.count({ tool: "track_package" })).toBe(2);
    await index.removeTool("p1", "track_package");
    expect(await spy!.count({ tool: "track_package" })).toBe(0);
    expect(await spy!.count({ partition: "p1" })).toBe(TOOLS.length - 1);

    // One key, `partition`: the partition's cards, or its wordings under their own value.
    const ours = [{ partition: "p1" }, { partition: wordingPartition("p1") }];
    for (const filter of spy!.filters) expect(ours).toContainEqual(filter);
    for (const params of spy!.deletes as { ids?: string[]; filter?: unknown }[]) {
      if (params.filter !== undefined) expect(ours).toContainEqual(params.filter);
      else expect(params.ids!.length).toBeGreaterThan(0);
    }
    expect(spy!.deletes).toContainEqual({ ids: [expect.stringMatching(/^p1\/track.*package\/2$/)] });
  });

  it("stores and searches unit vectors only, whatever the embeddings return", async () => {
    const ledger = await ledgerWithTools();
    const added: number[][] = [];
    const queried: number[][] = [];
    class Recording extends InMemoryVectorIndex {
      override async addVectors(
        vectors: number[][],
        documents: DocumentInterface[],
        options?: { ids?: string[] },
      ): Promise<string[]> {
        added.push(...vectors);
        return super.addVectors(vectors, documents, options);
      }
      override async similaritySearchVectorWithScore(
        query: number[],
        k: number,
        filter?: InMemoryFilter,
      ): Promise<[DocumentInterface, number][]> {
        queried.push(query);
        return super.similaritySearchVectorWithScore(query, k, filter);
      }
    }
    const index = new ToolIndex({
      ledger,
      embeddings: new FakeEmbeddingsLike(3),
      vectorStore: (e) => new Recording(e),
    });
    await index.route("p1", "will it rain tomorrow", { k: 2 });
    const length = (v: number[]) => Math.hypot(...v);
    expect(added.length).toBe(TOOLS.length);
    for (const v of [...added, ...queried]) expect(length(v)).toBeCloseTo(1, 9);
  });
});

/** Embeddings of a fixed length from letter counts, deliberately not unit length. */
class FakeEmbeddingsLike implements EmbeddingsInterface {
  constructor(private readonly scale = 1) {}

  async embedDocuments(texts: string[]): Promise<number[][]> {
    return texts.map((t) => this.vector(t));
  }

  async embedQuery(text: string): Promise<number[]> {
    return this.vector(text);
  }

  private vector(text: string): number[] {
    const v = new Array<number>(26).fill(0);
    for (const c of text.toLowerCase()) {
      const i = c.charCodeAt(0) - 97;
      if (i >= 0 && i < 26) v[i] += this.scale;
    }
    return v;
  }
}
