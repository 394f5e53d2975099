import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it, type TestContext } from "vitest";
import { ChromaVectorIndex } from "../../src/routing/chroma.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { TRAVEL_REQUESTS, TRAVEL_TOOLS } from "../helpers/travel-tools.js";
import { chromaForFile } from "../helpers/chroma.js";

const TOOLS = TRAVEL_TOOLS;
const REQUESTS = TRAVEL_REQUESTS;

const chroma = chromaForFile("tool-index-chroma.int");
let seq = 0;

function chromaIndex(ctx: TestContext, ledger: Ledger): ToolIndex {
  const { host, port } = chroma.need(ctx);
  const collectionName = `tools_${process.pid}_${seq++}`;
  return new ToolIndex({
    ledger,
    vectorStore: (embeddings) => new ChromaVectorIndex({ host, port, collectionName, embeddings }),
  });
}

/** Top-3 per request, tools with a positive score only (ties at 0 are broken arbitrarily by a server). */
async function ranked(index: ToolIndex, partition: string): Promise<string[][]> {
  const out: string[][] = [];
  for (const r of REQUESTS) {
    out.push((await index.route(partition, r, { k: 3 })).filter((o) => o.score > 1e-4).map((o) => o.tool));
  }
  return out;
}

describe("ToolIndex on a real Chroma server", () => {
  it("routes like the in-memory index, and a reindex from the ledger gives the same rankings", async (ctx) => {
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, TOOLS, { partition: "p1" });
    const onChroma = chromaIndex(ctx, ledger);
    const inMemory = new ToolIndex({ ledger });
    const first = await ranked(onChroma, "p1");
    expect(first).toEqual(await ranked(inMemory, "p1"));
    expect(first[0][0]).toBe("book_hotel");
    expect(first[3][0]).toBe("github.create_issue");

    const card = (await ledger.getCard("p1", "track_package"))!;
    const saved = await ledger.putCard({
      ...card,
      learned: { ...card.learned, examples: [{ text: "will it rain on my delivery", source: "learned", addedAt: 1 }] },
    });
    await onChroma.upsertCards("p1", [saved]);
    const updated = await ranked(onChroma, "p1");
    await onChroma.reindex("p1");
    expect(await ranked(onChroma, "p1")).toEqual(updated);
    const rebuilt = chromaIndex(ctx, ledger);
    expect(await ranked(rebuilt, "p1")).toEqual(updated);
  });

  it("never shows one partition's tools to another", async (ctx) => {
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, TOOLS.slice(0, 3), { partition: "tenant-a" });
    await registerTools(ledger, TOOLS.slice(3), { partition: "tenant-b" });
    const index = chromaIndex(ctx, ledger);
    for (const request of REQUESTS) {
      const a = (await index.route("tenant-a", request, { k: 10 })).map((o) => o.tool);
      const b = (await index.route("tenant-b", request, { k: 10 })).map((o) => o.tool);
      expect(a.every((t) => TOOLS.slice(0, 3).some((x) => x.name === t))).toBe(true);
      expect(b.every((t) => TOOLS.slice(3).some((x) => x.name === t))).toBe(true);
    }
    await index.removeTool("tenant-b", "send_email");
    expect((await index.route("tenant-b", "email my boss", { k: 10 })).map((o) => o.tool)).not.toContain("send_email");
  });
});
