import { Document, type DocumentInterface } from "@langchain/core/documents";
import { describe, expect, it } from "vitest";
import { seededRandom as rng } from "../../src/internal.js";
import { FilterMasks, MAX_FILTER_MASKS } from "../../src/routing/filter-masks.js";
import { LexicalEmbeddings } from "../../src/routing/lexical-embeddings.js";
import { InMemoryVectorIndex } from "../../src/routing/memory-vector-store.js";
import { sparseOf } from "../../src/routing/sparse-vector.js";

const unused = new LexicalEmbeddings({ dimension: 8 });
const shape = (hits: [DocumentInterface, number][]) => hits.map(([d, s]) => [d.id, s] as const);

describe("filter masks of the in-memory index", () => {
  it("keep a filter's mask up to date through adds, replacements, deletes and compaction after its first search", async () => {
    const random = rng(3);
    const dim = 64;
    // Caps low enough that the candidate pass runs (most terms common), requireProof so that
    // every answer must equal the exhaustive scan's: a stale mask would show as a difference.
    const index = new InMemoryVectorIndex(unused, {
      firstPass: { termRows: 10, termShare: 0, commonPostings: 40, rescore: 16, requireProof: true },
    });
    const vec = () => {
      const v = new Array<number>(dim).fill(0);
      for (let j = 0; j < 6; j++) v[Math.floor(random() ** 2 * dim)] = random() * 2 - 1;
      return sparseOf(v);
    };
    const add = async (names: string[], partition: (i: number) => string) =>
      index.addSparseVectors(
        names.map(() => vec()),
        names.map((id, i) => new Document({ pageContent: id, metadata: { partition: partition(i) }, id })),
        { ids: names },
      );
    const check = async () => {
      for (let q = 0; q < 20; q++) {
        const query = vec();
        for (const filter of [{ partition: "a" }, { partition: ["a", "b"] }]) {
          expect(shape(await index.similaritySearchSparseWithScore(query, 5, filter))).toEqual(
            shape(await index.exhaustiveSearchVectorWithScore(query, 5, filter)),
          );
        }
      }
    };
    const first = Array.from({ length: 200 }, (_, i) => `t${i}`);
    await add(first, (i) => (i % 2 === 0 ? "a" : "b"));
    await check();
    // After the masks exist: new tools in "a", tools moved from "a" to "c", a deleted tool.
    await add(
      Array.from({ length: 100 }, (_, i) => `n${i}`),
      () => "a",
    );
    await add(
      first.filter((_, i) => i % 4 === 0),
      () => "c",
    );
    await index.delete({ ids: ["t2", "n5"] });
    await check();
    expect((await index.similaritySearchSparseWithScore(vec(), 300, { partition: "c" })).length).toBe(50);
    // Enough deletes to compact (slots renumbered): the masks are built again.
    await index.delete({ filter: { partition: "b" } });
    await check();
    expect(await index.count({ partition: "b" })).toBe(0);
    expect(index.searchStats.proven + index.searchStats.fallbacks).toBeGreaterThan(0);
  });

  it("builds one mask per distinct metadata filter, whatever the order of its keys, and drops the oldest past its cap", () => {
    const masks = new FilterMasks();
    const docs = [
      new Document({ pageContent: "x", metadata: { partition: "a", kind: "tool" } }),
      new Document({ pageContent: "y", metadata: { partition: "b", kind: "tool" } }),
      undefined,
    ];
    const keep = masks.rowFilter({ partition: "a", kind: "tool" }, docs)!;
    expect([0, 1, 2].map(keep)).toEqual([true, false, false]);
    const same = masks.rowFilter({ kind: "tool", partition: "a" }, docs)!;
    expect([0, 1].map(same)).toEqual([true, false]);
    masks.added(3, new Document({ pageContent: "z", metadata: { partition: "a", kind: "tool" } }));
    expect(same(3)).toBe(true);
    for (let i = 0; i < MAX_FILTER_MASKS; i++) masks.rowFilter({ partition: `p${i}` }, docs);
    expect((masks as unknown as { masks: Map<string, unknown> }).masks.size).toBe(MAX_FILTER_MASKS);
    const byFunction = masks.rowFilter((doc) => doc.pageContent === "y", docs)!;
    expect([0, 1].map(byFunction)).toEqual([false, true]);
    expect(masks.rowFilter({}, docs)).toBeUndefined();
  });
});
