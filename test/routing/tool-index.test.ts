import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { examplesWeight, ToolIndex } from "../../src/routing/tool-index.js";
import { InvalidInput } from "../../src/errors.js";
import { ToolRouter } from "../../src/routing/router.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { LexicalEmbeddings } from "../../src/routing/lexical-embeddings.js";
import { Embeddings, type EmbeddingsInterface } from "@langchain/core/embeddings";
import type { VectorStore } from "@langchain/core/vectorstores";
import { BlendedEmbeddings } from "../../src/routing/blended-embeddings.js";
import { InMemoryVectorIndex } from "../../src/routing/memory-vector-store.js";
import { isSparse } from "../../src/routing/sparse-vector.js";
import { withExamples } from "../../src/learn/card-examples.js";

const TOOLS = [
  { name: "lookup_order", description: "Look up an order's status and items by its order id." },
  { name: "refund_order", description: "Refund an order in full or in part to the original payment method." },
  { name: "search_public_docs", description: "Search the published product documentation customers can read." },
  { name: "search_internal_runbooks", description: "Search internal runbooks and incident postmortems." },
  { name: "send_email", description: "Send an email to a customer." },
  { name: "reset_password", description: "Send a password reset link to an account's email address." },
  { name: "track_shipment", description: "Track a parcel with the carrier's tracking number." },
];

async function setup(partitions = ["p1"]) {
  const ledger = new Ledger(new InMemoryStore());
  for (const partition of partitions) await registerTools(ledger, TOOLS, { partition });
  const index = new ToolIndex({ ledger });
  for (const partition of partitions) await index.reindex(partition);
  return { ledger, index };
}

describe("ToolIndex", () => {
  it("routes a request to the tool whose text matches, with ranks from 1", async () => {
    const { index } = await setup();
    const offers = await index.route("p1", "where is my parcel? here is the tracking number", { k: 3 });
    expect(offers[0].tool).toBe("track_shipment");
    expect(offers.map((o) => o.rank)).toEqual([1, 2, 3]);
    expect(offers[0].score).toBeGreaterThan(offers[1].score);
  });

  it("keeps partitions apart: a tool registered in one is never offered in another", async () => {
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, TOOLS.slice(0, 3), { partition: "a" });
    await registerTools(ledger, [{ name: "private_tool", description: "Track a parcel for tenant b only." }], {
      partition: "b",
    });
    const index = new ToolIndex({ ledger });
    const inA = await index.route("a", "track my parcel", { k: 10 });
    const inB = await index.route("b", "track my parcel", { k: 10 });
    expect(inA.map((o) => o.tool)).not.toContain("private_tool");
    expect(inB.map((o) => o.tool)).toEqual(["private_tool"]);
  });

  it("a learned example makes routing find the tool for the users' words", async () => {
    const { ledger, index } = await setup();
    const request = "my stuff never arrived";
    const before = await index.route("p1", request, { k: 1 });
    expect(before[0]?.tool).not.toBe("track_shipment");
    const card = (await ledger.getCard("p1", "track_shipment"))!;
    const saved = await ledger.putCard({
      ...card,
      learned: { ...card.learned, examples: [{ text: "stuff never arrived", source: "learned", addedAt: 1 }] },
    });
    await index.upsertCards("p1", [saved]);
    const after = await index.route("p1", request, { k: 1 });
    expect(after[0].tool).toBe("track_shipment");
  });

  it("weighs a tool's examples by how many it has, never more than examples.max times its tool part", () => {
    expect(examplesWeight(0)).toBe(0);
    expect(examplesWeight(4)).toBeCloseTo(1);
    const weights = [1, 2, 4, 8, 12, 100].map((n) => examplesWeight(n));
    expect(weights).toEqual([...weights].sort((a, b) => a - b));
    expect(Math.max(...weights)).toBeLessThan(2);
    expect(examplesWeight(3, { max: 1, half: 0 })).toBe(1);
  });

  it("mixes a tool's examples into its vector: one example moves it less than several", async () => {
    const { ledger, index } = await setup();
    const request = "my stuff never arrived";
    const card = (await ledger.getCard("p1", "track_shipment"))!;
    const withExamples = (texts: string[]) => ({
      ...card,
      learned: { ...card.learned, examples: texts.map((text) => ({ text, source: "learned" as const, addedAt: 1 })) },
    });
    const score = async (texts: string[]) =>
      ToolIndex.bestScore(await index.embedRequest("p1", request), await index.cardVectors("p1", withExamples(texts)));
    const none = await score([]);
    const one = await score(["stuff never arrived"]);
    const four = await score([
      "stuff never arrived",
      "parcel never arrived",
      "where is my stuff",
      "stuff not here yet",
    ]);
    expect(none).toBeLessThan(one);
    expect(one).toBeLessThan(four);
    // The tool part always keeps a share: the tool still matches its own description's words.
    const own = await index.embedRequest("p1", "carrier tracking number");
    expect(
      ToolIndex.bestScore(
        own,
        await index.cardVectors(
          "p1",
          withExamples(["stuff never arrived", "parcel never arrived", "where is my stuff", "stuff not here yet"]),
        ),
      ),
    ).toBeGreaterThan(0.2);
  });

  it("embeds a tool part once: what-if vectors with other examples reuse it and equal a fresh index's", async () => {
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, TOOLS, { partition: "p1" });
    const embedded: string[] = [];
    const embeddings = new (class extends LexicalEmbeddings {
      override async embedDocuments(texts: string[]): Promise<number[][]> {
        embedded.push(...texts);
        return super.embedDocuments(texts);
      }
    })().fit(TOOLS.map((t) => t.description));
    const index = new ToolIndex({ ledger, embeddings });
    await index.reindex("p1");
    const card = (await ledger.getCard("p1", "track_shipment"))!;
    const variant = (examples: string[], description = card.author.description) => ({
      ...card,
      author: { ...card.author, description },
      learned: {
        ...card.learned,
        examples: examples.map((text) => ({ text, source: "learned" as const, addedAt: 1 })),
      },
    });
    embedded.length = 0;
    const a = await index.cardVectors("p1", variant(["stuff never arrived"]));
    const b = await index.cardVectors("p1", variant(["where is my stuff"]));
    expect(embedded).toEqual(["stuff never arrived", "where is my stuff"]);
    const fresh = new ToolIndex({ ledger, embeddings });
    expect(a).toEqual(await fresh.cardVectors("p1", variant(["stuff never arrived"])));
    expect(b).not.toEqual(a);
    // Another description is another tool part: embedded, not taken from the cache.
    embedded.length = 0;
    await index.cardVectors("p1", variant([], "Track a parcel by its carrier code."));
    expect(embedded).toEqual([expect.stringContaining("Track a parcel by its carrier code.")]);
  });

  it("builds its default lexical embeddings with the options given, and refuses bad ones at once", async () => {
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, TOOLS, { partition: "p1" });
    const small = new ToolIndex({ ledger, lexical: { dimension: 512 } });
    const card = (await ledger.getCard("p1", "refund_order"))!;
    expect((await small.cardVectors("p1", card))[0]).toHaveLength(512);
    expect((await new ToolIndex({ ledger }).cardVectors("p1", card))[0]).toHaveLength(8192);
    expect((await small.route("p1", "refund the order", { k: 1 }))[0].tool).toBe("refund_order");
    expect(() => new ToolIndex({ ledger, lexical: { dimension: 0 } })).toThrow(InvalidInput);
  });

  it("refuses a negative examples weight and a centering share outside [0, 1]", async () => {
    const ledger = new Ledger(new InMemoryStore());
    expect(() => new ToolIndex({ ledger, examples: { max: -1 } })).toThrow(InvalidInput);
    expect(() => new ToolIndex({ ledger, examples: { center: 1.5 } })).toThrow(InvalidInput);
    expect(() => new ToolIndex({ ledger, examples: { center: -0.1 } })).toThrow(InvalidInput);
  });

  it("centers examples: the style every tool's requests share stops matching, what sets each apart still does", async () => {
    // Five tools learned requests that all open the same way; track_shipment learned none.
    const style = "hello, I could really use some help";
    const learned: Record<string, string[]> = {
      lookup_order: [`${style} checking what I bought last week`, `${style}, what did I buy`],
      refund_order: [`${style} getting my money back`, `${style}, I was charged twice`],
      search_public_docs: [`${style} finding the setup guide`, `${style} with the manual`],
      send_email: [`${style} writing to a client`, `${style} sending a note`],
      reset_password: [`${style}, I cannot log in`, `${style}, locked out of my account`],
    };
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, TOOLS, { partition: "p1" });
    for (const card of await ledger.listCards("p1")) {
      const examples = (learned[card.name] ?? []).map((text) => ({ text, source: "learned" as const, addedAt: 1 }));
      await ledger.putCard({ ...card, learned: { ...card.learned, examples } });
    }
    const route = async (center: number, request: string) => {
      const index = new ToolIndex({ ledger, examples: { center } });
      return index.route("p1", request, { k: 2 });
    };
    const request = `${style} tracking a parcel`;
    const [plain, centered] = [await route(0, request), await route(1, request)];
    expect(plain[0].tool).toBe("track_shipment");
    expect(centered[0].tool).toBe("track_shipment");
    // Without centering the runner-up matches on the shared opening alone; with it, hardly at all.
    expect(plain[1].score).toBeGreaterThan(0.15);
    expect(centered[1].score).toBeLessThan(plain[1].score / 2);
    // A tool's own learned words still bring it first, as strongly as before.
    for (const [tool, words] of [
      ["refund_order", "I was charged twice"],
      ["reset_password", "locked out of my account"],
    ]) {
      const [a, b] = [await route(0, words), await route(1, words)];
      expect(a[0].tool).toBe(tool);
      expect(b[0].tool).toBe(tool);
      expect(b[0].score).toBeGreaterThanOrEqual(a[0].score);
    }
  });

  it("never lets notes or Not-for lines into what routing searches", async () => {
    const { ledger, index } = await setup();
    const card = (await ledger.getCard("p1", "send_email"))!;
    const saved = await ledger.putCard({
      ...card,
      learned: {
        ...card.learned,
        notes: [{ text: "zebra quantum marmalade", revisionId: "r1" }],
        notFor: [
          { text: "Not for zebra quantum marmalade; use track_shipment.", tool: "track_shipment", revisionId: "r1" },
        ],
      },
    });
    await index.upsertCards("p1", [saved]);
    const offers = await index.route("p1", "zebra quantum marmalade", { k: 7 });
    const email = offers.find((o) => o.tool === "send_email")!;
    expect(email.score).toBeLessThan(0.05);
  });

  it("reindex from the ledger gives the same rankings as incremental upserts", async () => {
    const { ledger, index } = await setup();
    const card = (await ledger.getCard("p1", "refund_order"))!;
    const saved = await ledger.putCard({
      ...card,
      learned: { ...card.learned, examples: [{ text: "I want my money back", source: "learned", addedAt: 1 }] },
    });
    await index.upsertCards("p1", [saved]);
    const fresh = new ToolIndex({ ledger });
    await fresh.reindex("p1");
    await index.reindex("p1");
    for (const request of ["I want my money back", "reset my password", "internal incident postmortem"]) {
      expect((await fresh.route("p1", request, { k: 5 })).map((o) => o.tool)).toEqual(
        (await index.route("p1", request, { k: 5 })).map((o) => o.tool),
      );
    }
  });

  it("re-embeds only tools whose routing text changed", async () => {
    const { ledger, index } = await setup();
    const cards = await ledger.listCards("p1");
    let embedded = 0;
    const spy = index.store.addVectors.bind(index.store);
    index.store.addVectors = async (vectors, docs, options) => {
      embedded += vectors.length;
      return spy(vectors, docs, options);
    };
    await index.upsertCards("p1", cards);
    expect(embedded).toBe(0);
  });

  it("per-example mode scores a tool by its best example", async () => {
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, TOOLS, { partition: "p1" });
    const card = (await ledger.getCard("p1", "refund_order"))!;
    await ledger.putCard({
      ...card,
      learned: {
        ...card.learned,
        examples: [{ text: "charge reversal for a double payment", source: "learned", addedAt: 1 }],
      },
    });
    const index = new ToolIndex({ ledger, mode: "examples" });
    const offers = await index.route("p1", "charge reversal for a double payment", { k: 3 });
    expect(offers[0].tool).toBe("refund_order");
    expect(new Set(offers.map((o) => o.tool)).size).toBe(offers.length);
  });

  it("minScore gives the no-tool path", async () => {
    const { index } = await setup();
    expect(await index.route("p1", "hello there", { k: 5, minScore: 0.5 })).toEqual([]);
  });
});

describe("ToolRouter", () => {
  it("is a retriever: invoke returns one document per offered tool", async () => {
    const { index } = await setup();
    const router = new ToolRouter({ index, partition: "p1", maxTools: 2 });
    const docs = await router.invoke("reset my password please");
    expect(docs).toHaveLength(2);
    expect(docs[0].metadata.tool).toBe("reset_password");
    expect(docs[0].metadata.rank).toBe(1);
  });

  it("adds always-offered and sticky tools without counting them as offered", async () => {
    const { index } = await setup();
    const router = new ToolRouter({ index, partition: "p1", maxTools: 2, alwaysInclude: ["send_email"] });
    const routed = await router.route("reset my password please", { sticky: ["lookup_order", "send_email"] });
    expect(routed.offered.map((o) => o.tool)).not.toContain("send_email");
    expect(routed.offered).toHaveLength(2);
    expect(routed.always).toEqual(["send_email"]);
    expect(routed.sticky).toEqual(["lookup_order"]);
    expect(routed.tools).toEqual([...routed.offered.map((o) => o.tool), "send_email", "lookup_order"]);
    expect(routed.allSent).toBe(false);
  });

  it("says every tool was sent when there is nothing to choose", async () => {
    const { index } = await setup();
    const routed = await new ToolRouter({ index, partition: "p1", maxTools: 10 }).route("anything");
    expect(routed.allSent).toBe(true);
    expect(routed.offered).toHaveLength(TOOLS.length);
  });
});

describe("ToolIndex with a blend of lexical and dense parts", () => {
  /** A dense part: letters counted, so texts that share letters meet. */
  class Letters extends Embeddings {
    async embedDocuments(texts: string[]) {
      return texts.map((t) =>
        [...t.toLowerCase()].reduce(
          (v, ch) => (v[(ch.charCodeAt(0) - 97 + 26) % 26]++, v),
          new Array<number>(26).fill(0),
        ),
      );
    }
    async embedQuery(text: string) {
      return (await this.embedDocuments([text]))[0];
    }
  }
  /** The in-memory index with its search overridden (as it is): the routing index then gives it dense vectors. */
  class DenseOnly extends InMemoryVectorIndex {
    override similaritySearchVectorWithScore(
      ...args: Parameters<InMemoryVectorIndex["similaritySearchVectorWithScore"]>
    ) {
      return super.similaritySearchVectorWithScore(...args);
    }
  }
  async function learned(vectorStore?: (e: EmbeddingsInterface) => VectorStore) {
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, TOOLS, { partition: "p1" });
    const embeddings = new BlendedEmbeddings({
      parts: [
        { embeddings: new LexicalEmbeddings(), weight: 0.6 },
        { embeddings: new Letters({}), weight: 0.4 },
      ],
    });
    const index = new ToolIndex({ ledger, embeddings, wordings: true, ...(vectorStore ? { vectorStore } : {}) });
    await index.reindex("p1");
    const served = [
      ["track_shipment", "my stuff never showed up"],
      ["track_shipment", "where did my stuff go"],
      ["refund_order", "I want my money back"],
      ["refund_order", "money back please"],
    ];
    await ledger.appendTurns(
      served.map(([tool, request], i) => ({
        partition: "p1",
        threadId: `t${i}`,
        requestId: `r${i}`,
        request,
        calls: [],
        servedBy: tool,
      })),
    );
    await index.refreshWordings("p1");
    return index;
  }

  it("embeds a request once per state: the same vector again, the dense one to the bit, a new one after a refit", async () => {
    const sparse = await learned();
    const dense = await learned((e) => new DenseOnly(e));
    for (const request of ["where is my stuff", "money back for my order", "zzz"]) {
      const first = await sparse.embedQuery("p1", request);
      expect(await sparse.embedQuery("p1", request)).toBe(first);
      // What a review's "what if" reads: the sparse vector made dense, equal to the dense path's.
      expect(await sparse.embedRequest("p1", request)).toEqual(await dense.embedRequest("p1", request));
      await sparse.reindex("p1");
      const refit = await sparse.embedQuery("p1", request);
      expect(refit).not.toBe(first);
      expect(refit).toEqual(first);
    }
  });

  it("holds it by its nonzero entries and routes as it routes the dense vectors", async () => {
    const sparse = await learned();
    const dense = await learned((e) => new DenseOnly(e));
    for (const request of ["where is my stuff", "money back for my order", "send an email", "zzz"]) {
      const vector = await sparse.embedQuery("p1", request);
      expect(isSparse(vector)).toBe(true);
      expect(isSparse(await dense.embedQuery("p1", request))).toBe(false);
      const a = await sparse.route("p1", request, { k: 5 });
      const b = await dense.route("p1", request, { k: 5 });
      expect(a.map((o) => o.tool)).toEqual(b.map((o) => o.tool));
      a.forEach((o, i) => expect(o.score).toBeCloseTo(b[i].score, 12));
    }
  });
});

describe("ToolIndex with wordings: each route searched once", () => {
  const turns = (tool: string, requests: string[], from: number) =>
    requests.map((request, i) => ({
      partition: "p1",
      threadId: `t${from + i}`,
      requestId: `r${from + i}`,
      request,
      calls: [],
      servedBy: tool,
    }));
  async function learned() {
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, TOOLS, { partition: "p1" });
    const index = new ToolIndex({ ledger, wordings: true });
    await index.reindex("p1");
    await ledger.appendTurns([
      ...turns("track_shipment", ["my stuff never showed up", "where did my stuff go", "stuff still not here"], 1),
      ...turns("refund_order", ["I want my money back", "money back please", "give me my money back"], 10),
    ]);
    await index.refreshWordings("p1");
    return { ledger, index };
  }
  const requests = ["where is my stuff", "money back for my order", "send an email about my stuff", "zzz"];

  it("answers wordingScores after routeVector from what the route searched, the same as a fresh index", async () => {
    const { index } = await learned();
    const fresh = (await learned()).index;
    for (const request of requests) {
      const vector = await index.embedQuery("p1", request);
      const routed = await index.routeVector("p1", vector, { k: 5 });
      const terms = await index.wordingScores("p1", vector);
      expect(terms.size).toBeGreaterThan(0);
      expect(terms).toEqual(await fresh.wordingScores("p1", await fresh.embedQuery("p1", request)));
      expect(routed).toEqual(await fresh.route("p1", request, { k: 5 }));
      // The map handed out is the caller's: changing it changes nothing kept.
      terms.clear();
      expect((await index.wordingScores("p1", vector)).size).toBeGreaterThan(0);
    }
  });

  it("reads a request's wording evidence once while only cards change, and answers as a fresh index", async () => {
    let wordingSearches = 0;
    class Counting extends InMemoryVectorIndex {
      override async searchToolHits(...args: Parameters<InMemoryVectorIndex["searchToolHits"]>) {
        const filter = args[2] as Record<string, unknown> | undefined;
        if (String(filter?.partition).includes("wordings")) wordingSearches++;
        return super.searchToolHits(...args);
      }
    }
    const request = "where is my stuff";
    const build = async () => {
      const ledger = new Ledger(new InMemoryStore());
      // Enough tools that one card changed is no refit (a refit embeds and searches afresh).
      const more = Array.from({ length: 10 }, (_, i) => ({ name: `tool_${i}`, description: `Tool number ${i}.` }));
      await registerTools(ledger, [...TOOLS, ...more], { partition: "p1" });
      const index = new ToolIndex({ ledger, wordings: true, vectorStore: (e) => new Counting(e) });
      await index.reindex("p1");
      await ledger.appendTurns(turns("track_shipment", ["my stuff never showed up", "where did my stuff go"], 1));
      await index.refreshWordings("p1");
      // A card applied: an example that takes the request.
      const card = withExamples((await ledger.getCard("p1", "send_email"))!, [request]);
      return { index, card };
    };
    const { index, card } = await build();
    const before = await index.route("p1", request, { k: 5 });
    const searched = wordingSearches;
    await index.upsertCards("p1", [card]);
    const after = await index.route("p1", request, { k: 5 });
    expect(wordingSearches).toBe(searched);
    expect(after).not.toEqual(before);
    // An index that never routed before the card changed searches the wordings then: the same answer.
    const fresh = await build();
    await fresh.index.upsertCards("p1", [fresh.card]);
    expect(await fresh.index.route("p1", request, { k: 5 })).toEqual(after);
  });

  it("searches again once the partition changed", async () => {
    const { ledger, index } = await learned();
    const vector = await index.embedQuery("p1", "where is my stuff");
    const before = await index.wordingScores("p1", vector);
    await ledger.appendTurns(turns("track_shipment", ["my stuff is lost", "lost stuff again"], 20));
    await index.refreshWordings("p1");
    const after = await index.wordingScores("p1", vector);
    const fresh = (await learned()).index;
    await fresh.ledger.appendTurns(turns("track_shipment", ["my stuff is lost", "lost stuff again"], 20));
    await fresh.refreshWordings("p1");
    expect(after).toEqual(await fresh.wordingScores("p1", await fresh.embedQuery("p1", "where is my stuff")));
    expect(after).not.toEqual(before);
  });
});
