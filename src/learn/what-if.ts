import { ToolIndex } from "../index/tool-index.js";
import { intersects, tokenize } from "../index/tokenize.js";
import type { Offer, ToolCard, TurnRecord } from "../ledger/schema.js";

/** Where routing puts a request today, with one tool left out. */
export interface Probe {
  vector: number[];
  /** The best other tools, best first (at most k). */
  others: Offer[];
  /** Score a tool must beat to be offered (the k-th other; -Infinity when fewer than k). */
  kth: number;
  /** Score a tool must beat to rank first. */
  first: number;
}

/** A request another tool served that a new example would push that tool out for. */
export interface Displacement {
  query: string;
  request: string;
  servedBy: string;
}

/** Most served requests checked per candidate example (newest first). */
export const MAX_DISPLACEMENT_CHECKS = 200;

/**
 * Routing "what if" questions for one review or apply, against the index as it is now: would this
 * wording bring the tool into the offered set for that request, would it push the tool that
 * served another request out? Request vectors, tool vectors and routes are cached for the
 * operation; nothing is written.
 */
export class WhatIf {
  private readonly vectors = new Map<string, Promise<number[]>>();
  private readonly toolVectors = new Map<string, Promise<number[][]>>();
  private readonly routes = new Map<string, Promise<Offer[]>>();
  private readonly tokens = new Map<string, Set<string>>();

  constructor(
    readonly index: ToolIndex,
    readonly partition: string,
    readonly k: number,
    private readonly cards: ReadonlyMap<string, ToolCard>,
  ) {}

  /** The request's vector (cached). */
  vector(request: string): Promise<number[]> {
    let v = this.vectors.get(request);
    if (!v) {
      v = this.index.embedRequest(this.partition, request);
      this.vectors.set(request, v);
    }
    return v;
  }

  /** Vectors of a registered tool's current card (cached). */
  cardVectors(tool: string): Promise<number[][]> {
    let v = this.toolVectors.get(tool);
    if (!v) {
      const card = this.cards.get(tool);
      v = card ? this.index.cardVectors(this.partition, card) : Promise.resolve([]);
      this.toolVectors.set(tool, v);
    }
    return v;
  }

  /** Vectors of a hypothetical card (not cached). */
  variant(card: ToolCard, add: readonly string[], remove: readonly string[] = []): Promise<number[][]> {
    return this.index.cardVectors(this.partition, withExamples(card, add, remove));
  }

  /** Where routing puts `request` with `tool` left out. */
  async probe(request: string, tool: string): Promise<Probe> {
    const vector = await this.vector(request);
    let route = this.routes.get(request);
    if (!route) {
      route = this.index.routeVector(this.partition, vector, { k: this.k + 1 });
      this.routes.set(request, route);
    }
    const others = (await route).filter((o) => o.tool !== tool).slice(0, this.k);
    return {
      vector,
      others,
      kth: others.length < this.k ? Number.NEGATIVE_INFINITY : others[this.k - 1].score,
      first: others[0]?.score ?? Number.NEGATIVE_INFINITY,
    };
  }

  /**
   * The first request (served by another tool) that giving `tool` the vectors `variant` would
   * push its serving tool out of the offered set for, or null. Only requests sharing a word with
   * `query` are checked (a lexical filter: an example lifts a tool's score mainly for requests
   * that overlap it), newest first, at most {@link MAX_DISPLACEMENT_CHECKS}.
   */
  async displaces(
    tool: string,
    query: string,
    variant: readonly number[][],
    served: readonly TurnRecord[],
  ): Promise<Displacement | null> {
    const words = this.words(query);
    let checked = 0;
    const current = await this.cardVectors(tool);
    for (let i = served.length - 1; i >= 0 && checked < MAX_DISPLACEMENT_CHECKS; i--) {
      const turn = served[i];
      const servedBy = turn.servedBy;
      if (servedBy === undefined || servedBy === tool) continue;
      if (!intersects(this.words(turn.request), words)) continue;
      checked += 1;
      const q = await this.vector(turn.request);
      const after = ToolIndex.bestScore(q, variant);
      // Cheap test first: a tool that does not outscore the serving tool cannot push it out.
      if (after <= ToolIndex.bestScore(q, await this.cardVectors(servedBy))) continue;
      const probe = await this.probe(turn.request, tool);
      const last = probe.others[this.k - 1];
      if (!last || last.tool !== servedBy) continue;
      const wasIn = ToolIndex.bestScore(q, current) > probe.kth;
      if (!wasIn && after > probe.kth) return { query, request: turn.request, servedBy };
    }
    return null;
  }

  private words(text: string): Set<string> {
    let w = this.tokens.get(text);
    if (!w) {
      w = new Set(tokenize(text));
      this.tokens.set(text, w);
    }
    return w;
  }
}

/** Rank a tool with this score would get (1-based), or null when it would not be offered. */
export function rankOf(score: number, probe: Probe): number | null {
  if (!(score > probe.kth)) return null;
  return 1 + probe.others.filter((o) => o.score >= score).length;
}

/** A card with examples added (as learned) and synthetic ones removed. */
export function withExamples(card: ToolCard, add: readonly string[], remove: readonly string[] = []): ToolCard {
  const gone = new Set(remove);
  const examples = [
    ...card.learned.examples.filter((e) => !(e.source === "synthetic" && gone.has(e.text))),
    ...add.map((text) => ({ text, source: "learned" as const, addedAt: 0 })),
  ];
  return { ...card, learned: { ...card.learned, examples } };
}

