import { describe, expect, it } from "vitest";
import { InvalidInput } from "../../src/errors.js";
import { BlendedEmbeddings } from "../../src/routing/blended-embeddings.js";
import { LexicalEmbeddings } from "../../src/routing/lexical-embeddings.js";
import { denseOf } from "../../src/routing/sparse-vector.js";
import {
  SemanticWordEmbeddings,
  WordVectorsUnavailable,
  loadWordVectors,
  type WordVectorTable,
} from "../../src/routing/word-embeddings.js";

const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i], 0);

/** A three-dimensional toy table: films and movies are near, banks are elsewhere. */
const table: WordVectorTable = {
  dimension: 3,
  get: (word) =>
    (({ film: [1, 0.1, 0], movie: [0.9, 0.2, 0], watch: [0.5, 0.5, 0], bank: [0, 0, 1] }) as Record<string, number[]>)[
      word
    ],
};

describe("SemanticWordEmbeddings", () => {
  it("averages known word vectors into a unit vector and skips unknown words and stopwords", async () => {
    const e = new SemanticWordEmbeddings({ table });
    const v = await e.embedQuery("the film zzyzx");
    expect(v).toHaveLength(3);
    expect(Math.hypot(...v)).toBeCloseTo(1, 6);
    expect(v[0]).toBeGreaterThan(0.99);
    expect(await e.embedQuery("of the zzyzx")).toEqual([0, 0, 0]);
  });

  it("puts synonyms near each other where words do not overlap", async () => {
    const e = new SemanticWordEmbeddings({ table });
    const [film, movie, bank] = await e.embedDocuments(["watch a film", "movie", "bank"]);
    expect(dot(film, movie)).toBeGreaterThan(0.9);
    expect(dot(film, bank)).toBeCloseTo(0, 6);
  });

  it("fails with a typed error naming the install command when the package is missing", async () => {
    const e = new SemanticWordEmbeddings({ packageName: "tool-lessons-no-such-word-vectors" });
    await expect(e.embedQuery("film")).rejects.toThrow(WordVectorsUnavailable);
    await expect(loadWordVectors("tool-lessons-no-such-word-vectors")).rejects.toThrow(
      /npm install tool-lessons-no-such-word-vectors/,
    );
  });
});

describe("BlendedEmbeddings", () => {
  it("gives cosine equal to the weighted sum of the parts' cosines", async () => {
    const lexical = new LexicalEmbeddings({ dimension: 128 });
    const semantic = new SemanticWordEmbeddings({ table });
    const blended = new BlendedEmbeddings({
      parts: [
        { embeddings: lexical, weight: 7 },
        { embeddings: semantic, weight: 3 },
      ],
    });
    expect(blended.parts.map((p) => p.weight)).toEqual([0.7, 0.3]);
    const a = "watch a film tonight";
    const b = "movie to watch";
    const [va, vb] = await blended.embedDocuments([a, b]);
    expect(va).toHaveLength(128 + 3);
    expect(Math.hypot(...va)).toBeCloseTo(1, 6);
    const lexCos = dot(await lexical.embedQuery(a), await lexical.embedQuery(b));
    const semCos = dot(await semantic.embedQuery(a), await semantic.embedQuery(b));
    expect(dot(va, vb)).toBeCloseTo(0.7 * lexCos + 0.3 * semCos, 6);
    expect(await blended.embedQuery(a)).toEqual(va);
  });

  it("with `center`, fitted on a partition's texts: the other parts' shared direction is taken off", async () => {
    // Every word shares one direction (as averaged word vectors do): unrelated texts look alike.
    const coned: WordVectorTable = {
      dimension: 3,
      get: (word) =>
        (({ film: [1, 0, 2], movie: [0.9, 0.1, 2], bank: [0, 1, 2], loan: [0.1, 0.9, 2] }) as Record<string, number[]>)[
          word
        ],
    };
    const semantic = new SemanticWordEmbeddings({ table: coned });
    const texts = ["film", "movie", "bank", "loan"];
    const plain = new BlendedEmbeddings({ parts: [{ embeddings: semantic, weight: 1 }] });
    expect(plain.fitsPerPartition).toBe(false);
    const [pf, pb] = await plain.fittedOn(texts).embedDocuments(["film", "bank"]);
    expect(dot(pf, pb)).toBeGreaterThan(0.7);

    const centred = new BlendedEmbeddings({ parts: [{ embeddings: semantic, weight: 1 }], center: true });
    expect(centred.fitsPerPartition).toBe(true);
    const fitted = centred.fittedOn(texts);
    const [film, movie, bank] = await fitted.embedDocuments(["film", "movie", "bank"]);
    expect(dot(film, bank)).toBeLessThan(0);
    expect(dot(film, movie)).toBeGreaterThan(0.9);
    expect(Math.hypot(...film)).toBeCloseTo(1, 6);
    expect(await fitted.embedQuery("film")).toEqual(film);
    // A lexical part is fitted, not centred; the instance itself is unchanged.
    const both = new BlendedEmbeddings({
      parts: [
        { embeddings: new LexicalEmbeddings({ dimension: 64 }), weight: 1 },
        { embeddings: semantic, weight: 1 },
      ],
      center: true,
    });
    const lexicalPart = both.fittedOn(texts).parts[0].embeddings;
    expect(lexicalPart).toBeInstanceOf(LexicalEmbeddings);
    expect((lexicalPart as LexicalEmbeddings).isFitted).toBe(true);
    expect((both.parts[0].embeddings as LexicalEmbeddings).isFitted).toBe(false);
  });

  it("embedSparse gives the entries embedDocuments and embedQuery widen, with no zero among them", async () => {
    const lexical = new LexicalEmbeddings({ dimension: 256 }).fit(["watch a film tonight", "open a bank account"]);
    const blended = new BlendedEmbeddings({
      parts: [
        { embeddings: lexical, weight: 7 },
        { embeddings: new SemanticWordEmbeddings({ table }), weight: 3 },
      ],
    });
    // The last text has no word the table knows: its semantic part is all zeros and adds nothing.
    const texts = ["watch a film tonight", "movie at the bank", "zzyzx quux"];
    const dense = await blended.embedDocuments(texts);
    const sparse = await blended.embedSparse(texts);
    sparse.forEach((v, i) => {
      expect(v.dimension).toBe(256 + 3);
      expect(denseOf(v)).toEqual(dense[i]);
      expect([...v.value].every((x) => x !== 0)).toBe(true);
    });
    expect(sparse[2].index.every((d) => d < 256)).toBe(true);
    const [query] = await blended.embedSparse([texts[1]], true);
    expect(denseOf(query)).toEqual(await blended.embedQuery(texts[1]));
  });

  it("refuses no parts and non-positive weights", () => {
    expect(() => new BlendedEmbeddings({ parts: [] })).toThrow(InvalidInput);
    expect(() => new BlendedEmbeddings({ parts: [{ embeddings: new LexicalEmbeddings(), weight: 0 }] })).toThrow(
      InvalidInput,
    );
  });
});
