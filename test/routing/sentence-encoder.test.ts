import http from "node:http";
import https from "node:https";
import net from "node:net";
import tls from "node:tls";
import { InMemoryStore } from "@langchain/langgraph";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SentenceEncoderUnavailable } from "../../src/errors.js";
import { BlendedEmbeddings } from "../../src/routing/blended-embeddings.js";
import { LexicalEmbeddings } from "../../src/routing/lexical-embeddings.js";
import {
  SentenceEncoderEmbeddings,
  sentenceEncoderRouting,
  type SentenceEncoderModel,
} from "../../src/routing/sentence-encoder.js";
import { routingPreset } from "../../src/routing/presets.js";
import { ToolIndex } from "../../src/routing/tool-index.js";
import { registerTools } from "../../src/learn/register.js";
import { Ledger } from "../../src/ledger/ledger.js";

/**
 * A fake encoder where synonyms share no letters: each text is the sum of its words' concept
 * vectors ("film" and "movie" are one concept), so only the encoder, never the lexical part, can
 * tell they are near. Counts the texts it was asked for.
 */
function fakeEncoder(): SentenceEncoderModel & { texts: string[][] } {
  const concepts: Record<string, number> = {
    film: 0,
    movie: 0,
    cinema: 0,
    money: 1,
    cash: 1,
    refund: 1,
    parcel: 2,
    package: 2,
  };
  const texts: string[][] = [];
  return {
    texts,
    async embed(batch: string[]) {
      texts.push([...batch]);
      return batch.map((text) => {
        const v = [0, 0, 0, 0.01];
        for (const w of text.toLowerCase().split(/\W+/)) if (w in concepts) v[concepts[w]] += 1;
        return v;
      });
    },
  };
}

const TOOLS = [
  { name: "showtimes", description: "List showtimes at the cinema near you." },
  { name: "refunds", description: "Return money for an order." },
  { name: "tracking", description: "Where a parcel is now." },
];

describe("SentenceEncoderEmbeddings", () => {
  it("loads its model lazily, once, and encodes in batches (a blank text as a space)", async () => {
    const model = fakeEncoder();
    const load = vi.fn(async () => model);
    const e = new SentenceEncoderEmbeddings({ load, batchSize: 2 });
    expect(load).not.toHaveBeenCalled();
    const vs = await e.embedDocuments(["film", "cash", "  ", "parcel", "movie"]);
    expect(vs).toHaveLength(5);
    expect(model.texts).toEqual([["film", "cash"], [" ", "parcel"], ["movie"]]);
    expect(await e.embedQuery("cinema")).toEqual([1, 0, 0, Math.fround(0.01)]);
    expect(await e.embedDocuments([])).toEqual([]);
  });

  it("keeps the vectors of texts it encoded (deterministic), within its cache size", async () => {
    const model = fakeEncoder();
    const e = new SentenceEncoderEmbeddings({ load: async () => model, cacheSize: 2 });
    const first = await e.embedDocuments(["film", "cash", "film"]);
    expect(model.texts).toEqual([["film", "cash"]]);
    expect(await e.embedDocuments(["cash", "film"])).toEqual([first[1], first[0]]);
    expect(model.texts).toHaveLength(1);
    await e.embedQuery("parcel"); // evicts "film", the oldest
    await e.embedQuery("film");
    expect(model.texts.slice(1)).toEqual([["parcel"], ["film"]]);
    const none = fakeEncoder();
    const uncached = new SentenceEncoderEmbeddings({ load: async () => none, cacheSize: 0 });
    await uncached.embedQuery("film");
    await uncached.embedQuery("film");
    expect(none.texts).toEqual([["film"], ["film"]]);
  });
});

describe("SentenceEncoderEmbeddings.prefetch", () => {
  it("encodes announced texts one by one, ahead, in order; a text asked for meanwhile is not encoded twice", async () => {
    const model = fakeEncoder();
    const e = new SentenceEncoderEmbeddings({ load: async () => model, batchSize: 8 });
    e.prefetch(["film", "cash", "film", "  ", "parcel"]);
    // Asked while "film" is in flight, "cash" queued: each its own call, as embedQuery makes it.
    const [film] = await e.embedDocuments(["film"]);
    expect(film).toEqual(await new SentenceEncoderEmbeddings({ load: async () => fakeEncoder() }).embedQuery("film"));
    await new Promise((r) => setTimeout(r, 10));
    expect(model.texts).toEqual([["film"], ["cash"], [" "], ["parcel"]]);
    // All kept: nothing more is asked of the model, and a text kept is not prefetched again.
    await e.embedDocuments(["cash", "parcel", "film"]);
    e.prefetch(["cash", "movie"]);
    await e.embedQuery("movie");
    expect(model.texts.slice(4)).toEqual([["movie"]]);
  });

  it("prefetches nothing past its cache, and the blend passes the texts to its encoder part", async () => {
    const model = fakeEncoder();
    const none = new SentenceEncoderEmbeddings({ load: async () => model, cacheSize: 0 });
    none.prefetch(["film"]);
    await new Promise((r) => setTimeout(r, 10));
    expect(model.texts).toEqual([]);
    const blended = sentenceEncoderRouting({ encoder: { load: async () => model } }).embeddings;
    blended.prefetch(["cash"]);
    await new Promise((r) => setTimeout(r, 10));
    expect(model.texts).toEqual([["cash"]]);
  });
});

describe("sentenceEncoderRouting (the lexical + sentence encoder preset)", () => {
  it("is a half and half blend with an unfitted lexical part, examples embedded one by one", () => {
    const preset = sentenceEncoderRouting({ encoder: { load: async () => fakeEncoder() } });
    expect(preset.embeddings).toBeInstanceOf(BlendedEmbeddings);
    expect(preset.embeddings.parts.map((p) => p.weight)).toEqual([0.5, 0.5]);
    expect(preset.embeddings.parts[0].embeddings).toBeInstanceOf(LexicalEmbeddings);
    expect(preset.embeddings.parts[1].embeddings).toBeInstanceOf(SentenceEncoderEmbeddings);
    expect(preset.embeddings.fitsPerPartition).toBe(true);
    expect(preset.examples).toEqual({ embed: "each" });
    // Its wordings re-rank freely: no tool stays offered on its card's score alone.
    expect(preset.wordings).toEqual({ keep: 0 });
    expect(Object.keys(routingPreset("lexical"))).toEqual([]);
    // A replay's text cache: the encoder keeps as many vectors as it is told.
    const encoder = routingPreset("use", { textCache: 40_000 }).embeddings!.parts[1].embeddings;
    expect((encoder as unknown as { cacheSize: number }).cacheSize).toBe(40_000);
  });

  it("routes by meaning where no word is shared, fits the lexical part per partition and embeds each example alone", async () => {
    const model = fakeEncoder();
    const ledger = new Ledger(new InMemoryStore());
    await registerTools(ledger, TOOLS, { partition: "p" });
    const card = (await ledger.listCards("p")).find((c) => c.name === "tracking")!;
    await ledger.putCard(
      {
        ...card,
        learned: {
          ...card.learned,
          examples: [
            { text: "where is my package", source: "learned", revisionId: "r1", addedAt: 1 },
            { text: "has the package shipped", source: "learned", revisionId: "r1", addedAt: 1 },
          ],
        },
      },
      { expectVersion: card.version },
    );
    // Centred on request (the mean is taken over each tool's whole routing text, examples joined).
    const centred = sentenceEncoderRouting({ encoder: { load: async () => fakeEncoder() }, center: true });
    expect(centred.embeddings.center).toBe(true);
    expect((await new ToolIndex({ ledger, ...centred }).route("p", "a movie tonight", { k: 1 }))[0].tool).toBe(
      "showtimes",
    );
    const preset = sentenceEncoderRouting({ encoder: { load: async () => model } });
    expect(preset.embeddings.center).toBe(false);
    const index = new ToolIndex({ ledger, ...preset });
    const [first] = await index.route("p", "a movie tonight", { k: 1 });
    expect(first.tool).toBe("showtimes");
    // The vectors: each example was its own text to the encoder, never the two joined.
    const asked = model.texts.flat();
    expect(asked).toContain("where is my package");
    expect(asked).toContain("has the package shipped");
    expect(asked.some((t) => t.includes("where is my package\n"))).toBe(false);
    // The preset's own lexical part stays unfitted: the index fitted a copy for the partition.
    expect((preset.embeddings.parts[0].embeddings as LexicalEmbeddings).isFitted).toBe(false);
  });
});

describe("the bundled Universal Sentence Encoder (optional dev dependency)", () => {
  const patched: Array<() => void> = [];
  afterEach(() => {
    for (const undo of patched.splice(0)) undo();
  });

  it("loads from the package's own files and embeds with no network call on any path", async () => {
    const calls: string[] = [];
    const trap = <T extends object>(module: T, key: keyof T & string) => {
      const original = module[key];
      (module as Record<string, unknown>)[key] = () => {
        calls.push(key);
        throw new Error(`network call ${key} during a sentence-encoder test`);
      };
      patched.push(() => ((module as Record<string, unknown>)[key] = original));
    };
    trap(http, "request");
    trap(http, "get");
    trap(https, "request");
    trap(https, "get");
    trap(net, "connect");
    trap(net, "createConnection");
    trap(tls, "connect");
    trap(globalThis as unknown as Record<string, unknown>, "fetch");
    // The trap holds: a connection attempt from here is caught and counted.
    expect(() => https.get("https://example.invalid/")).toThrow(/network call/);
    calls.length = 0;

    const e = new SentenceEncoderEmbeddings();
    const [film, movie, refund] = await e.embedDocuments([
      "recommend a good film to watch tonight",
      "suggest a movie for this evening",
      "I want my money back for this order",
    ]);
    expect(film).toHaveLength(512);
    const cos = (a: number[], b: number[]) =>
      a.reduce((s, x, i) => s + x * b[i], 0) /
      Math.sqrt(a.reduce((s, x) => s + x * x, 0) * b.reduce((s, x) => s + x * x, 0));
    expect(cos(film, movie)).toBeGreaterThan(cos(film, refund) + 0.1);
    expect(calls).toEqual([]);
  }, 120_000);
});

describe("the bundled encoder in worker threads (the encoder's workers option)", () => {
  it("gives the vectors the same calls give in this thread, and lets the process exit when idle", async () => {
    const texts = ["recommend a good film to watch tonight", "suggest a movie for this evening", "refund me"];
    const here = new SentenceEncoderEmbeddings({ cacheSize: 0 });
    const there = new SentenceEncoderEmbeddings({ cacheSize: 0, workers: 2 });
    expect(await there.embedDocuments(texts)).toEqual(await here.embedDocuments(texts));
    expect(await there.embedQuery(texts[1])).toEqual(await here.embedQuery(texts[1]));
    const ahead = new SentenceEncoderEmbeddings({ workers: 1 });
    ahead.prefetch(texts);
    expect(await ahead.embedQuery(texts[2])).toEqual(await here.embedQuery(texts[2]));
  }, 120_000);
});

describe("a missing sentence-encoder package", () => {
  afterEach(() => {
    vi.doUnmock("@energetic-ai/embeddings");
    vi.resetModules();
  });

  it("is a SentenceEncoderUnavailable naming the package and the install command, at first use", async () => {
    vi.resetModules();
    vi.doMock("@energetic-ai/embeddings", () => {
      throw new Error("Cannot find package '@energetic-ai/embeddings'");
    });
    const fresh = await import("../../src/routing/sentence-encoder.js");
    const errors = await import("../../src/errors.js");
    const e = new fresh.SentenceEncoderEmbeddings();
    const error = await e.embedQuery("hello").catch((x: unknown) => x);
    expect(error).toBeInstanceOf(errors.SentenceEncoderUnavailable);
    expect((error as SentenceEncoderUnavailable).context.packageName).toBe("@energetic-ai/embeddings");
    expect((error as Error).message).toMatch(/npm install @energetic-ai\/core @energetic-ai\/embeddings/);
  });
});
