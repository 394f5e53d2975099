import { describe, expect, it } from "vitest";
import { InvalidInput } from "../../src/errors.js";
import { DEFAULT_LEXICAL_EMBEDDINGS, LexicalEmbeddings } from "../../src/routing/lexical-embeddings.js";

const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i], 0);
const norm = (a: number[]) => Math.sqrt(dot(a, a));

const corpus = [
  "search_flights: find flights between two airports on a date",
  "book_hotel: reserve a hotel room in a city",
  "get_weather: current weather and forecast for a city",
  "send_email: send an email message to a contact",
];

describe("LexicalEmbeddings", () => {
  it("gives vectors of the configured dimension, unit length", async () => {
    const e = new LexicalEmbeddings({ dimension: 256 });
    const [v] = await e.embedDocuments(["Find me a cheap flight to Lisbon"]);
    expect(v).toHaveLength(256);
    expect(norm(v)).toBeCloseTo(1, 5);
    expect(new LexicalEmbeddings().options.dimension).toBe(DEFAULT_LEXICAL_EMBEDDINGS.dimension);
  });

  it("gives the all-zero vector for text with no content words", async () => {
    const v = await new LexicalEmbeddings({ dimension: 64 }).embedQuery("the of and ?!");
    expect(v.every((x) => x === 0)).toBe(true);
  });

  it("is deterministic across instances", async () => {
    const a = await new LexicalEmbeddings().fit(corpus).embedQuery("weather in Paris tomorrow");
    const b = await new LexicalEmbeddings().fit(corpus).embedQuery("weather in Paris tomorrow");
    expect(a).toEqual(b);
  });

  it("embeds queries and documents alike", async () => {
    const e = new LexicalEmbeddings().fit(corpus);
    const [d] = await e.embedDocuments(["weather forecast"]);
    expect(await e.embedQuery("weather forecast")).toEqual(d);
  });

  it("ranks the tool that shares the request's words first", async () => {
    const e = new LexicalEmbeddings().fit(corpus);
    const docs = await e.embedDocuments(corpus);
    const q = await e.embedQuery("what's the forecast for Oslo?");
    const scores = docs.map((d) => dot(d, q));
    expect(scores.indexOf(Math.max(...scores))).toBe(2);
  });

  it("matches inflections through stems and ids through character n-grams", async () => {
    const e = new LexicalEmbeddings();
    const booking = await e.embedQuery("booking hotels");
    expect(dot(booking, await e.embedQuery("book a hotel"))).toBeGreaterThan(0.5);
    const ngramOnly = new LexicalEmbeddings({ ngramWeight: 0.5 });
    const a = await ngramOnly.embedQuery("cus123");
    expect(dot(a, await ngramOnly.embedQuery("cus_123"))).toBeGreaterThan(0.2);
    // Whole words alone (and no number feature, which both have) do not meet.
    const wordsOnly = new LexicalEmbeddings({ ngramWeight: 0, numbers: false });
    expect(dot(await wordsOnly.embedQuery("cus123"), await wordsOnly.embedQuery("cus_123"))).toBeCloseTo(0, 5);
  });

  it("fitting IDF makes rare words count for more than common ones", async () => {
    const texts = ["city hotel", "city weather", "city email", "city flights", "city museum"];
    const unfitted = new LexicalEmbeddings({ ngramWeight: 0 });
    const fitted = new LexicalEmbeddings({ ngramWeight: 0 }).fit(texts);
    expect(unfitted.isFitted).toBe(false);
    expect(fitted.documentCount).toBe(5);
    expect(fitted.idf("w:citi")).toBeLessThan(fitted.idf("w:hotel"));
    expect(unfitted.idf("w:hotel")).toBe(1);
    // "city" is in every text, so after fitting a query on "city hotel" leans towards "hotel".
    const sim = async (e: LexicalEmbeddings) => dot(await e.embedQuery("city hotel"), await e.embedQuery("hotel"));
    expect(await sim(fitted)).toBeGreaterThan(await sim(unfitted));
  });

  it("partialFit adds to the counts; fit starts over", () => {
    const e = new LexicalEmbeddings().fit(["alpha"]).partialFit(["beta", "alpha"]);
    expect(e.documentCount).toBe(3);
    e.fit(["gamma"]);
    expect(e.documentCount).toBe(1);
    expect(e.adapt(["a1", "b2"]).documentCount).toBe(2);
  });

  it("round-trips its state through JSON and gives identical vectors", async () => {
    const e = new LexicalEmbeddings({ dimension: 512, ngramWeight: 0.3 }).fit(corpus);
    const text = JSON.stringify(e.toJSON());
    const back = LexicalEmbeddings.fromJSON(text);
    expect(back.options).toEqual(e.options);
    expect(JSON.stringify(back.toJSON())).toBe(text);
    expect(await back.embedQuery("email my hotel booking")).toEqual(await e.embedQuery("email my hotel booking"));
    expect(LexicalEmbeddings.fromJSON(JSON.parse(text)).documentCount).toBe(corpus.length);
  });

  it("refuses a state that is not its own, and bad options, with InvalidInput", () => {
    expect(() => LexicalEmbeddings.fromJSON({ kind: "other" })).toThrow(InvalidInput);
    expect(() => LexicalEmbeddings.fromJSON("{not json")).toThrow(InvalidInput);
    expect(() => new LexicalEmbeddings({ dimension: 0 })).toThrow(InvalidInput);
    expect(() => new LexicalEmbeddings({ ngramWeight: 2 })).toThrow(InvalidInput);
  });

  it("counts a number, raw or masked as the recorder keeps it, as one shared feature", async () => {
    const texts = ["calculate #.####**#.#### for me", "convert a file to pdf", "what is 3.0117^3.82488"];
    const on = new LexicalEmbeddings().fit(texts.slice(0, 2));
    const off = new LexicalEmbeddings({ numbers: false }).fit(texts.slice(0, 2));
    const cos = async (e: LexicalEmbeddings) => {
      const [learned, query] = await e.embedDocuments([texts[0], texts[2]]);
      return dot(learned, query);
    };
    expect(await cos(off)).toBeCloseTo(0, 5);
    expect(await cos(on)).toBeGreaterThan(0.05);
  });

  it("loads a state saved before the number feature existed with it off, giving the same vectors", async () => {
    const saved = new LexicalEmbeddings({ numbers: false }).fit(corpus).toJSON();
    const { numbers: _dropped, ...older } = saved.options;
    const back = LexicalEmbeddings.fromJSON({ ...saved, options: older });
    expect(back.options.numbers).toBe(false);
    const text = "flights for 2 people on 12.05";
    expect(await back.embedQuery(text)).toEqual(await LexicalEmbeddings.fromJSON(saved).embedQuery(text));
  });
});
