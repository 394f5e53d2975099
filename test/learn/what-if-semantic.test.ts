import { Embeddings, type EmbeddingsInterface } from "@langchain/core/embeddings";
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { registerTools } from "../../src/learn/register.js";
import { sparse, unit } from "../../src/learn/unit-vectors.js";
import { MAX_NEAR_POOL, WhatIf } from "../../src/learn/what-if.js";
import { spreadOrder } from "../../src/internal.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { BlendedEmbeddings } from "../../src/routing/blended-embeddings.js";
import { LexicalEmbeddings } from "../../src/routing/lexical-embeddings.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { SemanticWordEmbeddings, type WordVectorTable } from "../../src/routing/word-embeddings.js";

/**
 * The routing re-check with semantic embeddings: a candidate example that takes another tool's
 * request without sharing a word with it must be caught. Synonyms here share no letters ("box" and
 * "crate", "refund" and "cash"... by concept), so no word-based filter can see them.
 */
const CONCEPTS: Record<string, number> = {
  box: 0,
  crate: 0,
  parcel: 0,
  track: 1,
  where: 1,
  refund: 2,
  reimburse: 2,
  money: 3,
  cash: 3,
  order: 4,
  shipment: 5,
};
const DIM = 6;

/** Bag of concepts: each known word adds one to its concept; unknown words are ignored. */
class ConceptEmbeddings extends Embeddings {
  constructor() {
    super({});
  }
  async embedQuery(text: string): Promise<number[]> {
    const v = new Array<number>(DIM).fill(0);
    for (const w of text.toLowerCase().split(/[^a-z]+/)) if (w in CONCEPTS) v[CONCEPTS[w]] += 1;
    return v;
  }
  async embedDocuments(texts: string[]): Promise<number[][]> {
    return Promise.all(texts.map((t) => this.embedQuery(t)));
  }
}

/** The same concepts as a word-vector table, for the package's word-vector blend. */
const TABLE: WordVectorTable = {
  dimension: DIM,
  get: (word) => {
    const c = CONCEPTS[word.toLowerCase()];
    if (c === undefined) return undefined;
    const v = new Array<number>(DIM).fill(0);
    v[c] = 1;
    return v;
  },
};

const P = "p";
const TOOLS = [
  { name: "track_shipment", description: "Track a parcel." },
  { name: "refund_order", description: "Refund money." },
];
/** Served by the parcel tracker; shares no word with the candidate below. */
const SERVED = { request: "crate crate cash", servedBy: "track_shipment" };
/** A candidate example for the refund tool: "box" means what "crate" means. */
const CANDIDATE = "box box refund";

async function whatIf(embeddings: EmbeddingsInterface) {
  const ledger = new Ledger(new InMemoryStore());
  await registerTools(ledger, TOOLS, { partition: P });
  // One example weighs as much as many would (half 0); routing offers one tool.
  const index = new ToolIndex({ ledger, embeddings, examples: { half: 0 }, wordings: false });
  await index.reindex(P);
  const cards = new Map((await ledger.listCards(P)).map((c) => [c.name, c]));
  return { w: new WhatIf(index, P, 1, cards), cards };
}

describe("WhatIf.displaces with semantic embeddings", () => {
  for (const [name, make] of [
    ["a fake embedding where synonyms share no letters", () => new ConceptEmbeddings()],
    [
      "the word-vector blend (lexical 0.7 + word vectors 0.3)",
      () =>
        new BlendedEmbeddings({
          parts: [
            { embeddings: new LexicalEmbeddings(), weight: 0.7 },
            { embeddings: new SemanticWordEmbeddings({ table: TABLE }), weight: 0.3 },
          ],
        }),
    ],
  ] as const) {
    it(`catches a request the candidate takes without a shared word: ${name}`, async () => {
      const { w, cards } = await whatIf(make());
      // Served right today: the tracker ranks first for it.
      expect((await w.probe(SERVED.request, "refund_order")).others[0].tool).toBe("track_shipment");
      const variant = await w.variant(cards.get("refund_order")!, [CANDIDATE]);
      expect(await w.displaces("refund_order", CANDIDATE, variant, [SERVED])).toEqual({
        query: CANDIDATE,
        ...SERVED,
      });
      // A candidate in the refund tool's own sense takes nothing.
      const own = "reimburse order";
      const safe = await w.variant(cards.get("refund_order")!, [own]);
      expect(await w.displaces("refund_order", own, safe, [SERVED])).toBeNull();
    });
  }

  it("checks a bounded pool chosen by the embeddings: the one request it takes, among many it does not, is found", async () => {
    const { w, cards } = await whatIf(new ConceptEmbeddings());
    const variant = await w.variant(cards.get("refund_order")!, [CANDIDATE]);
    const unrelated = { request: "track shipment where", servedBy: "track_shipment" };
    const served = [SERVED, ...Array.from({ length: 1000 }, () => unrelated)];
    expect(await w.displaces("refund_order", CANDIDATE, variant, served)).toEqual({ query: CANDIDATE, ...SERVED });
  });

  it("the review's objective reads the other tools' requests closest to the candidates, not those sharing a word", async () => {
    const { w } = await whatIf(new ConceptEmbeddings());
    const closeness = await w.closenessTo([CANDIDATE]);
    const sharing = { request: "refund shipment where", servedBy: "track_shipment" };
    const picked = await w.nearOthers(
      [SERVED, ...Array.from({ length: 50 }, () => sharing)],
      "refund_order",
      closeness,
      1,
    );
    expect(picked).toEqual([SERVED]);
  });

  it("nearOthers gives what a full sort of its pool gives: the best by closeness, ties in window order, for any closeness and bound", async () => {
    const { w } = await whatIf(new ConceptEmbeddings());
    const words = Object.keys(CONCEPTS);
    // Many repeated requests (ties), more than the pool holds, both tools serving.
    const served = Array.from({ length: MAX_NEAR_POOL + 300 }, (_, i) => ({
      id: i,
      request: `${words[i % words.length]} ${words[(i * 7) % words.length]} ${words[(i * 3) % 5]}`,
      servedBy: i % 4 === 0 ? "refund_order" : "track_shipment",
    }));
    const pool = [...spreadOrder(served.length)]
      .map((i) => served[i])
      .filter((t) => t.servedBy !== "refund_order")
      .slice(0, MAX_NEAR_POOL);
    for (const texts of [[CANDIDATE], ["track where"], ["cash money order", "box"]]) {
      const closeness = await w.closenessTo(texts);
      const scored = await Promise.all(
        pool.map(async (turn, order) => ({
          turn,
          order,
          score: closeness(sparse(unit(await w.vector(turn.request)))),
        })),
      );
      const sorted = scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score || a.order - b.order);
      for (const max of [1, 7, 200, 600, 5000]) {
        const expected = sorted.slice(0, max).map((s) => s.turn);
        expect(await w.nearOthers(served, "refund_order", closeness, max)).toEqual(expected);
      }
    }
  });
});
