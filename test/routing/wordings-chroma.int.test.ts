import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it, type TestContext } from "vitest";
import { ChromaVectorIndex } from "../../src/routing/chroma.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { wordingPartition } from "../../src/routing/tool-index-ids.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { TRAVEL_TOOLS } from "../helpers/travel-tools.js";
import { chromaForFile } from "../helpers/chroma.js";

const chroma = chromaForFile("wordings-chroma.int");
let seq = 0;

function onChroma(ctx: TestContext, ledger: Ledger): { index: ToolIndex; store: () => ChromaVectorIndex } {
  const { host, port } = chroma.need(ctx);
  const collectionName = `wordings_${process.pid}_${seq++}`;
  let store: ChromaVectorIndex | undefined;
  const index = new ToolIndex({
    ledger,
    wordings: true,
    vectorStore: (embeddings) => (store = new ChromaVectorIndex({ host, port, collectionName, embeddings })),
  });
  return { index, store: () => store! };
}

const SERVED: [string, string[]][] = [
  ["track_package", ["my stuff never showed up", "stuff still missing after a week", "where did my stuff go"]],
  ["get_weather", ["do I need an umbrella", "umbrella or sunglasses today", "should I bring an umbrella"]],
];
const REQUESTS = ["my stuff is missing", "umbrella needed in Oslo?", "where is my parcel", "a room in Rome"];

async function ledgerWithTraffic(): Promise<Ledger> {
  const ledger = new Ledger(new InMemoryStore());
  await registerTools(ledger, TRAVEL_TOOLS, { partition: "p1" });
  let n = 0;
  for (const [tool, requests] of SERVED) {
    await ledger.appendTurns(
      requests.map((request) => {
        n += 1;
        return { partition: "p1", threadId: `t${n}`, requestId: `r${n}`, request, calls: [], servedBy: tool };
      }),
    );
  }
  return ledger;
}

async function ranked(index: ToolIndex): Promise<string[][]> {
  const out: string[][] = [];
  for (const r of REQUESTS) {
    out.push((await index.route("p1", r, { k: 3 })).filter((o) => o.score > 1e-4).map((o) => o.tool));
  }
  return out;
}

describe("wordings on a real Chroma server", () => {
  it("holds one record per wording, routes like the in-memory index, and rebuilds them from the ledger", async (ctx) => {
    const ledger = await ledgerWithTraffic();
    const chroma = onChroma(ctx, ledger);
    const inMemory = new ToolIndex({ ledger, wordings: true });
    expect(await chroma.index.refreshWordings("p1")).toBe(6);
    expect(await inMemory.refreshWordings("p1")).toBe(6);
    const records = await chroma.store().similaritySearch("stuff umbrella", 50, { partition: wordingPartition("p1") });
    expect(records).toHaveLength(6);
    expect(new Set(records.map((d) => d.metadata.kind))).toEqual(new Set(["wording"]));
    const routes = await ranked(chroma.index);
    expect(routes).toEqual(await ranked(inMemory));
    expect(routes[0][0]).toBe("track_package");
    expect(routes[1][0]).toBe("get_weather");
    // A reindex from the ledger gives the same records and the same routes.
    await chroma.index.reindex("p1");
    expect(
      await chroma.store().similaritySearch("stuff umbrella", 50, { partition: wordingPartition("p1") }),
    ).toHaveLength(6);
    expect(await ranked(chroma.index)).toEqual(routes);
    // A removed tool's wordings go with it.
    await chroma.index.removeTool("p1", "get_weather");
    const left = await chroma.store().similaritySearch("stuff umbrella", 50, { partition: wordingPartition("p1") });
    expect(left.map((d) => d.metadata.tool)).toEqual(["track_package", "track_package", "track_package"]);
  });
});
