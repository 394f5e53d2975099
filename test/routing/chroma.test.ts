import { describe, expect, it } from "vitest";
import { InvalidInput, StoreUnavailable, ToolLessonsError } from "../../src/errors.js";
import { ChromaVectorIndex } from "../../src/routing/chroma.js";
import { toChromaWhere, toFlatMetadata } from "../../src/routing/chroma-metadata.js";
import { freePort } from "../../src/routing/chroma-server.js";
import { LexicalEmbeddings } from "../../src/routing/lexical-embeddings.js";

describe("toChromaWhere", () => {
  it("translates one key to $eq and several to a sorted $and", () => {
    expect(toChromaWhere({ partition: "p1" })).toEqual({ partition: { $eq: "p1" } });
    expect(toChromaWhere({ partition: "p1", kind: "tool" })).toEqual({
      $and: [{ kind: { $eq: "tool" } }, { partition: { $eq: "p1" } }],
    });
  });

  it("turns arrays into $in, an empty filter into no clause, an empty array into match-nothing", () => {
    expect(toChromaWhere({ kind: ["tool", "lesson"] })).toEqual({ kind: { $in: ["tool", "lesson"] } });
    expect(toChromaWhere({})).toBeUndefined();
    expect(toChromaWhere(undefined)).toBeUndefined();
    expect(toChromaWhere({ kind: [] })).toBeNull();
  });

  it("refuses predicates and nested values", () => {
    expect(() => toChromaWhere((() => true) as unknown as Record<string, string>)).toThrow(InvalidInput);
    expect(() => toChromaWhere({ a: { b: 1 } } as unknown as Record<string, string>)).toThrow(InvalidInput);
  });
});

describe("toFlatMetadata", () => {
  it("keeps scalars and drops null and undefined", () => {
    expect(toFlatMetadata({ a: "x", b: 2, c: false, d: null, e: undefined })).toEqual({ a: "x", b: 2, c: false });
  });

  it("refuses nested objects, arrays and non-finite numbers with a typed error naming the key", () => {
    expect(() => toFlatMetadata({ nested: { a: 1 } }, "doc-1")).toThrow(/nested.*doc-1.*flat metadata only/);
    expect(() => toFlatMetadata({ tags: ["a"] })).toThrow(InvalidInput);
    expect(() => toFlatMetadata({ n: Number.NaN })).toThrow(ToolLessonsError);
  });
});

describe("ChromaVectorIndex without a server", () => {
  it("fails with StoreUnavailable that says how to start one", async () => {
    const port = await freePort();
    const index = new ChromaVectorIndex({
      embeddings: new LexicalEmbeddings(),
      collectionName: "nowhere",
      host: "127.0.0.1",
      port,
    });
    const error = await index.setup().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreUnavailable);
    expect((error as Error).message).toMatch(/chroma run/);
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
    await expect(index.similaritySearch("anything", 1)).rejects.toThrow(StoreUnavailable);
  });

  it("refuses a missing collection name", () => {
    expect(() => new ChromaVectorIndex({ embeddings: new LexicalEmbeddings(), collectionName: "" })).toThrow(
      InvalidInput,
    );
  });
});
