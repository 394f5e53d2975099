/**
 * Every supported backend of the routing index gives the in-memory index's top-5 on the same
 * MetaTool slice (60 tools, 200 requests): the package's ChromaVectorIndex and
 * `@langchain/community`'s `Chroma` in both of its distance spaces, on a real Chroma server started
 * from the `chromadb` package. Stores that break the contract are refused when the index is built.
 */
import { MemoryVectorStore } from "@langchain/classic/vectorstores/memory";
import { Chroma } from "@langchain/community/vectorstores/chroma";
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { FakeVectorStore } from "@langchain/core/utils/testing";
import type { VectorStore } from "@langchain/core/vectorstores";
import { InMemoryStore } from "@langchain/langgraph";
import { ChromaClient } from "chromadb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UnsupportedVectorStore } from "../../src/errors.js";
import { ChromaVectorIndex } from "../../src/routing/chroma.js";
import { startChromaServer, type ChromaServer } from "../../src/routing/chroma-server.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import type { Offer } from "../../src/ledger/schema.js";
import { metaToolSlice, metaToolUnavailableReason, type MetaToolSlice } from "../helpers/metatool.js";

/** Scores closer than this are a tie: which of the tied tools comes first is arbitrary. */
const TIE = 1e-5;

let server: ChromaServer;
let slice: MetaToolSlice;
let ledger: Ledger;
let reference: Offer[][];
let seq = 0;

const unavailable = metaToolUnavailableReason();
if (unavailable) console.warn(`[backend-equivalence.int] skipped: ${unavailable}`);

beforeAll(async () => {
  if (unavailable) return;
  server = await startChromaServer();
  slice = metaToolSlice(60, 200);
  ledger = new Ledger(new InMemoryStore());
  await registerTools(ledger, slice.tools, { partition: "p1" });
  // Another partition on the same collections: a filtered search must never see it.
  await registerTools(ledger, metaToolSlice(80, 0).tools.slice(60), { partition: "p2" });
  reference = await top5(new ToolIndex({ ledger }));
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

async function top5(index: ToolIndex): Promise<Offer[][]> {
  await index.reindex("p1");
  await index.reindex("p2");
  const out: Offer[][] = [];
  for (const { query } of slice.requests) out.push(await index.route("p1", query, { k: 5 }));
  return out;
}

/**
 * Requests whose top-5 differs from the reference beyond ties: a different tool at a rank where
 * the scores are not tied, or a score off by more than rounding.
 */
function differences(got: Offer[][], want: Offer[][]): string[] {
  const out: string[] = [];
  got.forEach((offers, i) => {
    const expected = want[i];
    if (offers.length !== expected.length) out.push(`${i}: ${offers.length} offers, expected ${expected.length}`);
    offers.forEach((o, r) => {
      const e = expected[r];
      if (!e) return;
      if (Math.abs(o.score - e.score) > 1e-4) out.push(`${i}#${r + 1}: score ${o.score} vs ${e.score}`);
      if (o.tool !== e.tool && Math.abs(o.score - e.score) > TIE) out.push(`${i}#${r + 1}: ${o.tool} vs ${e.tool}`);
    });
  });
  return out;
}

const client = () => new ChromaClient({ host: server.host, port: server.port });

const backends: Record<string, () => (embeddings: EmbeddingsInterface) => VectorStore> = {
  "ChromaVectorIndex (tool-lessons/chroma)": () => (embeddings) =>
    new ChromaVectorIndex({ embeddings, client: client(), collectionName: `eq-own-${seq++}` }),
  "community Chroma, default l2 space": () => (embeddings) =>
    new Chroma(embeddings, { index: client(), collectionName: `eq-l2-${seq++}` }),
  "community Chroma, cosine space": () => (embeddings) =>
    new Chroma(embeddings, {
      index: client(),
      collectionName: `eq-cos-${seq++}`,
      collectionMetadata: { "hnsw:space": "cosine" },
    }),
};

describe.skipIf(unavailable !== null)(
  "every backend routes like the in-memory index (MetaTool, 60 tools, 200 requests)",
  () => {
    it("the reference is a real ranking: most requests find their tool in the top 5", () => {
      expect(slice.tools).toHaveLength(60);
      expect(slice.requests).toHaveLength(200);
      const hits = slice.requests.filter((r, i) => reference[i].some((o) => o.tool === r.expect)).length;
      expect(hits / slice.requests.length).toBeGreaterThan(0.6);
      for (const offers of reference) expect(offers).toHaveLength(5);
    });

    it.each(Object.keys(backends))("%s: the same top-5, the same scores", async (name) => {
      const index = new ToolIndex({ ledger, vectorStore: backends[name]() });
      const got = await top5(index);
      expect(differences(got, reference)).toEqual([]);
      // Partition p2's tools never reach p1's routing.
      const p1 = new Set(slice.tools.map((t) => t.name));
      for (const offers of got) for (const o of offers) expect(p1.has(o.tool)).toBe(true);
    });

    it("community Chroma undeclared is detected as a distance store; read as similarities it inverts the ranking", async () => {
      const l2 = (embeddings: EmbeddingsInterface) =>
        new Chroma(embeddings, { index: client(), collectionName: `eq-wrong-${seq++}` });
      const wrong = await top5(new ToolIndex({ ledger, vectorStore: l2, scores: "similarity" }));
      const agree = wrong.filter((offers, i) => offers[0]?.tool === reference[i][0].tool).length;
      expect(agree).toBeLessThan(20);
    });

    it("refuses stores without delete() when the index is built: core's FakeVectorStore, LangChain's MemoryVectorStore", () => {
      for (const make of [
        (e: EmbeddingsInterface) => new FakeVectorStore(e),
        (e: EmbeddingsInterface) => new MemoryVectorStore(e),
      ]) {
        let error: unknown;
        try {
          new ToolIndex({ ledger, vectorStore: make });
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(UnsupportedVectorStore);
        expect((error as UnsupportedVectorStore).missing).toEqual(["delete"]);
      }
    });
  },
);
