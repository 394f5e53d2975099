import { Document } from "@langchain/core/documents";
import { describe, expect, it, type TestContext } from "vitest";
import { InvalidInput } from "../../src/errors.js";
import { ChromaVectorIndex } from "../../src/routing/chroma.js";
import { LexicalEmbeddings } from "../../src/routing/lexical-embeddings.js";
import { InMemoryVectorIndex } from "../../src/routing/memory-vector-store.js";
import { chromaForFile } from "../helpers/chroma.js";

const TOOLS: Array<[id: string, text: string]> = [
  ["search_flights", "Search flights between two airports on a given date and compare fares"],
  ["book_hotel", "Reserve a hotel room in a city for check-in and check-out dates"],
  ["get_weather", "Current weather conditions and the forecast for a city"],
  ["send_email", "Send an email message with a subject and body to a contact"],
  ["stock_quote", "Latest stock price and market quote for a ticker symbol"],
  ["convert_currency", "Convert an amount from one currency to another at today's exchange rate"],
  ["translate_text", "Translate text between languages"],
  ["create_event", "Create a calendar event or meeting with attendees"],
  ["recipe_search", "Find cooking recipes by ingredient or cuisine"],
  ["news_headlines", "Top news headlines and articles on a topic"],
  ["track_package", "Track a parcel shipment by its tracking number"],
  ["pdf_summarize", "Summarize a PDF document into key points"],
];
const QUERIES = [
  "I need a room in Rome for next weekend",
  "what's the weather going to be like tomorrow",
  "email my boss the report",
  "how much is 100 dollars in euros",
  "where is my package",
  "summarize this pdf for me",
  "flights to Tokyo in March",
  "latest headlines about climate",
];

const chroma = chromaForFile("chroma.int");
const embeddings = new LexicalEmbeddings().fit(TOOLS.map(([, t]) => t));
let collectionSeq = 0;

async function freshIndex(ctx: TestContext): Promise<ChromaVectorIndex> {
  const server = chroma.need(ctx);
  return ChromaVectorIndex.create({
    embeddings,
    collectionName: `test-${process.pid}-${++collectionSeq}`,
    host: server.host,
    port: server.port,
  });
}

const toolDocs = (partition: string) =>
  TOOLS.map(([id, text]) => new Document({ pageContent: text, metadata: { tool: id, partition, kind: "tool" } }));

describe("ChromaVectorIndex on a real server", () => {
  it("upserts by id and reads back by id", async (ctx) => {
    const index = await freshIndex(ctx);
    expect(index._vectorstoreType()).toBe("tool-lessons-chroma");
    await index.addDocuments(toolDocs("p1"), { ids: TOOLS.map(([id]) => id) });
    expect(await index.count()).toBe(TOOLS.length);
    await index.addDocuments(
      [new Document({ pageContent: "Check the forecast and rain radar", metadata: { tool: "get_weather", v: 2 } })],
      {
        ids: ["get_weather"],
      },
    );
    expect(await index.count()).toBe(TOOLS.length);
    const [weather] = await index.getByIds(["get_weather"]);
    expect(weather.pageContent).toBe("Check the forecast and rain radar");
    // Replaced whole: the old metadata keys are gone, not merged.
    expect(weather.metadata).toEqual({ tool: "get_weather", v: 2 });
    const got = await index.getByIds(["send_email", "missing", "book_hotel"]);
    expect(got.map((d) => d.id)).toEqual(["send_email", "book_hotel"]);
  });

  it("stores documents without metadata", async (ctx) => {
    const index = await freshIndex(ctx);
    await index.addDocuments(
      [new Document({ pageContent: "plain text" }), new Document({ pageContent: "tagged", metadata: { a: 1 } })],
      {
        ids: ["plain", "tagged"],
      },
    );
    const [plain, tagged] = await index.getByIds(["plain", "tagged"]);
    expect(plain.metadata).toEqual({});
    expect(tagged.metadata).toEqual({ a: 1 });
  });

  it("returns similarity scores (higher is better) and the right tool first", async (ctx) => {
    const index = await freshIndex(ctx);
    await index.addDocuments(toolDocs("p1"), { ids: TOOLS.map(([id]) => id) });
    const hits = await index.similaritySearchWithScore("will it rain tomorrow? weather forecast", 3);
    expect(hits[0][0].id).toBe("get_weather");
    expect(hits[0][1]).toBeGreaterThan(hits[1][1]);
    expect(hits[0][1]).toBeGreaterThan(0);
    expect(hits[0][1]).toBeLessThanOrEqual(1 + 1e-6);
    const [[self, score]] = await index.similaritySearchVectorWithScore(await embeddings.embedQuery(TOOLS[0][1]), 1);
    expect(self.id).toBe(TOOLS[0][0]);
    expect(score).toBeCloseTo(1, 4);
  });

  it("keeps partitions apart: a filtered search never sees the other partition", async (ctx) => {
    const index = await freshIndex(ctx);
    await index.addDocuments(toolDocs("p1"), { ids: TOOLS.map(([id]) => `p1:${id}`) });
    await index.addDocuments(toolDocs("p2"), { ids: TOOLS.map(([id]) => `p2:${id}`) });
    for (const q of QUERIES) {
      const p1 = await index.similaritySearch(q, 30, { partition: "p1" });
      const p2 = await index.similaritySearch(q, 30, { partition: "p2" });
      expect(p1).toHaveLength(TOOLS.length);
      expect(p1.every((d) => d.metadata.partition === "p1")).toBe(true);
      expect(p2.every((d) => d.metadata.partition === "p2")).toBe(true);
      expect(p1.map((d) => d.metadata.tool)).toEqual(p2.map((d) => d.metadata.tool));
    }
    expect(await index.count({ partition: "p2" })).toBe(TOOLS.length);
    expect(await index.count({ partition: "p2", tool: "send_email" })).toBe(1);
    expect(await index.count({ tool: ["send_email", "book_hotel"] })).toBe(4);
    expect(await index.similaritySearch("email", 5, { tool: [] })).toEqual([]);
  });

  it("deletes by ids and by filter", async (ctx) => {
    const index = await freshIndex(ctx);
    await index.addDocuments(toolDocs("p1"), { ids: TOOLS.map(([id]) => `p1:${id}`) });
    await index.addDocuments(toolDocs("p2"), { ids: TOOLS.map(([id]) => `p2:${id}`) });
    await index.delete({ ids: ["p1:send_email", "p1:nothing"] });
    expect(await index.count()).toBe(2 * TOOLS.length - 1);
    expect(await index.getByIds(["p1:send_email"])).toEqual([]);
    await index.delete({ filter: { partition: "p2" } });
    expect(await index.count()).toBe(TOOLS.length - 1);
    expect(await index.count({ partition: "p2" })).toBe(0);
    await expect(index.delete({ filter: {} })).rejects.toThrow(InvalidInput);
    await index.clear();
    expect(await index.count()).toBe(0);
  });

  it("refuses nested metadata with a typed error and stores nothing of that batch", async (ctx) => {
    const index = await freshIndex(ctx);
    const bad = new Document({ pageContent: "x", metadata: { nested: { a: 1 } } });
    await expect(
      index.addDocuments([new Document({ pageContent: "ok" }), bad], { ids: ["ok", "bad"] }),
    ).rejects.toThrow(InvalidInput);
    expect(await index.count()).toBe(0);
  });

  it("gives the same top-k order as the in-memory index", async (ctx) => {
    const index = await freshIndex(ctx);
    const memory = new InMemoryVectorIndex(embeddings);
    const docs = toolDocs("p1");
    const ids = TOOLS.map(([id]) => id);
    await index.addDocuments(docs, { ids });
    await memory.addDocuments(docs, { ids });
    for (const q of QUERIES) {
      const fromChroma = await index.similaritySearchWithScore(q, 5);
      const all = await memory.similaritySearchWithScore(q, TOOLS.length);
      const fromMemory = all.slice(0, 5);
      expect(fromChroma.map(([, s]) => s)).toEqual(fromMemory.map(([, s]) => expect.closeTo(s, 4)));
      // Compare ids wherever the score is not tied with another document's (ties may come back in either order).
      fromChroma.forEach(([d], i) => {
        const tied = all.filter(([, s]) => Math.abs(s - fromMemory[i][1]) < 1e-5).length > 1;
        if (!tied) expect(d.id, q).toBe(fromMemory[i][0].id);
      });
    }
  });
});
