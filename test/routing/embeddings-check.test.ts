import { InMemoryStore } from "@langchain/langgraph";
import { Embeddings } from "@langchain/core/embeddings";
import { describe, expect, it } from "vitest";
import { InvalidEmbeddings, InvalidInput } from "../../src/errors.js";
import { embeddingsProblem, EmbeddingsGuard } from "../../src/routing/embeddings-check.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { BlendedEmbeddings } from "../../src/routing/blended-embeddings.js";
import { LexicalEmbeddings } from "../../src/routing/lexical-embeddings.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";

const TOOLS = [
  { name: "track_shipment", description: "Track a parcel with the carrier's tracking number." },
  { name: "refund_order", description: "Refund an order to the original payment method." },
];

/** Embeddings whose vectors a test decides: `documents` for tool texts, `query` for requests. */
class ScriptedEmbeddings extends Embeddings {
  constructor(
    private readonly documents: (text: string) => number[],
    private readonly query: (text: string) => number[] = documents,
  ) {
    super({});
  }
  async embedDocuments(texts: string[]): Promise<number[][]> {
    return texts.map((t) => this.documents(t));
  }
  async embedQuery(text: string): Promise<number[]> {
    return this.query(text);
  }
}

/** A small honest embedding: letters counted, so texts that share letters meet. */
const letters = (text: string): number[] => {
  const v = new Array<number>(26).fill(0);
  for (const ch of text.toLowerCase()) {
    const i = ch.charCodeAt(0) - 97;
    if (i >= 0 && i < 26) v[i] += 1;
  }
  return v;
};

async function indexWith(embeddings: Embeddings) {
  const ledger = new Ledger(new InMemoryStore());
  await registerTools(ledger, TOOLS, { partition: "p" });
  return new ToolIndex({ ledger, embeddings });
}

describe("embeddingsProblem", () => {
  it("finds all-zero batches, non-finite numbers and wrong sizes, and passes good vectors", () => {
    expect(
      embeddingsProblem(
        [
          [0, 0],
          [0, 0],
        ],
        undefined,
        true,
      ),
    ).toEqual({ problem: "all_zero" });
    expect(
      embeddingsProblem(
        [
          [0, 0],
          [0, 0],
        ],
        undefined,
        false,
      ),
    ).toBeUndefined();
    expect(embeddingsProblem([[1, Number.NaN]], undefined, true)).toEqual({ problem: "non_finite" });
    expect(embeddingsProblem([[1, Number.POSITIVE_INFINITY]], 2, false)).toEqual({ problem: "non_finite" });
    expect(
      embeddingsProblem(
        [
          [1, 0],
          [1, 0, 0],
        ],
        undefined,
        true,
      ),
    ).toEqual({
      problem: "wrong_size",
      dimension: 2,
      got: 3,
    });
    expect(embeddingsProblem([[1, 0, 0]], 2, false)).toEqual({ problem: "wrong_size", dimension: 2, got: 3 });
    expect(
      embeddingsProblem(
        [
          [0, 1],
          [0, 0],
        ],
        undefined,
        true,
      ),
    ).toBeUndefined();
  });

  it("the guard remembers the first batch's size and checks later batches against it", () => {
    const guard = new EmbeddingsGuard();
    guard.check([[1, 0, 0]], "documents");
    expect(() => guard.check([[1, 0]], "query")).toThrow(InvalidEmbeddings);
    // One request with no known word may embed to zeros: only a first batch of documents may not.
    expect(guard.check([[0, 0, 0]], "query")).toEqual([[0, 0, 0]]);
  });
});

describe("ToolIndex refuses embeddings it cannot route with, at first use", () => {
  it("all-zero vectors (which route every request by name order today)", async () => {
    const index = await indexWith(new ScriptedEmbeddings(() => [0, 0, 0, 0]));
    const error = await index.route("p", "where is my parcel", { k: 2 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidEmbeddings);
    expect(error).toBeInstanceOf(InvalidInput);
    expect((error as InvalidEmbeddings).context.problem).toBe("all_zero");
    expect((error as Error).message).toMatch(/all zeros/);
  });

  it("non-finite numbers", async () => {
    const index = await indexWith(new ScriptedEmbeddings((t) => [...letters(t).slice(0, 25), Number.NaN]));
    await expect(index.reindex("p")).rejects.toMatchObject({
      name: "InvalidEmbeddings",
      context: { problem: "non_finite" },
    });
  });

  it("tool vectors of different lengths", async () => {
    const index = await indexWith(new ScriptedEmbeddings((t) => letters(t).slice(0, t.length % 2 === 0 ? 26 : 20)));
    await expect(index.reindex("p")).rejects.toMatchObject({
      name: "InvalidEmbeddings",
      context: { problem: "wrong_size" },
    });
  });

  it("a request vector sized unlike the tools'", async () => {
    const index = await indexWith(new ScriptedEmbeddings(letters, (t) => letters(t).slice(0, 10)));
    await index.reindex("p");
    await expect(index.route("p", "track my parcel", { k: 1 })).rejects.toMatchObject({
      name: "InvalidEmbeddings",
      context: { problem: "wrong_size", dimension: 26, got: 10 },
    });
  });

  it("a blend's dense part, held by its nonzero entries: non-finite numbers, then a request sized unlike the tools'", async () => {
    const blendOf = (part: Embeddings) =>
      new BlendedEmbeddings({
        parts: [
          { embeddings: new LexicalEmbeddings({ dimension: 64 }), weight: 1 },
          { embeddings: part, weight: 1 },
        ],
      });
    const poisoned = await indexWith(blendOf(new ScriptedEmbeddings((t) => [...letters(t).slice(0, 25), Number.NaN])));
    await expect(poisoned.reindex("p")).rejects.toMatchObject({ context: { problem: "non_finite" } });
    const short = await indexWith(blendOf(new ScriptedEmbeddings(letters, (t) => letters(t).slice(0, 10))));
    await short.reindex("p");
    await expect(short.route("p", "track my parcel", { k: 1 })).rejects.toMatchObject({
      context: { problem: "wrong_size", dimension: 64 + 26, got: 64 + 10 },
    });
  });

  it("routes with embeddings that are fine, and keeps the package's own lexical default unchecked", async () => {
    const index = await indexWith(new ScriptedEmbeddings(letters));
    const [first] = await index.route("p", "track a parcel with the tracking number", { k: 1 });
    expect(first.tool).toBe("track_shipment");
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, TOOLS, { partition: "p" });
    // A request with no word the lexical embeddings know is a zero vector: routed, not refused.
    await expect(new ToolIndex({ ledger }).route("p", "?!", { k: 1 })).resolves.toHaveLength(1);
  });
});
