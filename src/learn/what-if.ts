/**
 * Routing "what if" questions against the index as it is now ({@link WhatIf}): where routing puts
 * a request with a tool left out, whether a new example would bring the tool in or push another
 * tool out, and which example wordings serve a tool's recorded requests best. The value of a
 * change is the {@link ExampleObjective}'s (`example-objective.ts`).
 */
import { ToolIndex } from "../routing/tool-index.js";
import { tokenize } from "../text/tokenize.js";
import { spreadOrder } from "../internal.js";
import type { Offer, ToolCard, TurnRecord } from "../ledger/schema.js";
import { withExamples } from "./card-examples.js";
import { type ExampleObjective, weigh } from "./example-objective.js";
import { maxDot, type SparseVector, sparse, unit } from "./unit-vectors.js";

// Re-exported for the modules that import the objective from here (the manager, the graph, the barrel).
export { DEFAULT_EXAMPLE_OBJECTIVE, type ExampleObjective, parseExampleObjective } from "./example-objective.js";

/** Where routing puts a request today, with one tool left out. */
export interface Probe {
  vector: number[];
  /** The best other tools, best first (at most k). */
  others: Offer[];
  /** Score a tool must beat to be offered (the k-th other; -Infinity when fewer than k). */
  kth: number;
  /** Score a tool must beat to rank first. */
  first: number;
  /** The best other tools down to the "near" depth (at least k), best first. */
  near: Offer[];
  /** Score a tool must beat to be within the near depth (-Infinity when fewer tools). */
  nth: number;
  /**
   * What each tool's wordings add to its card's score for this request (the index's wording
   * terms; empty when the index keeps none): a card's score plus this is the index's own score.
   */
  wordings: ReadonlyMap<string, number>;
}

/** The index's own score of `tool` for the probed request when its card scores `cardScore`. */
export function indexScore(probe: Pick<Probe, "wordings">, tool: string, cardScore: number): number {
  return cardScore + (probe.wordings.get(tool) ?? 0);
}

/** A request another tool served that a new example would push that tool out for. */
export interface Displacement {
  query: string;
  request: string;
  servedBy: string;
}

/** Most served requests checked per candidate example (spread over the window, newest first). */
export const MAX_DISPLACEMENT_CHECKS = 200;

/**
 * Most served requests read (embedded, cached for the operation) when looking for the ones a
 * candidate wording could affect: a spread over the window, chosen without regard to its words.
 */
export const MAX_NEAR_POOL = 1_000;

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
  private readonly terms = new Map<string, Promise<Map<string, number>>>();
  /** {@link terms} once resolved, read without a wait in the re-check's loop. */
  private readonly termsNow = new Map<string, Map<string, number>>();
  /** Per `served` list and tool, its near pool (see {@link nearOthers}): built once, read per candidate. */
  private readonly pools = new WeakMap<readonly NearTurn[], Map<string, NearPool<NearTurn>>>();
  private readonly tokens = new Map<string, Set<string>>();
  private readonly requestUnits = new Map<string, SparseVector>();
  private readonly cardUnits = new Map<string, Float64Array[]>();
  /** How deep {@link probe} looks (the near depth of {@link ExampleObjective}); at least `k`. */
  readonly depth: number;

  constructor(
    readonly index: ToolIndex,
    readonly partition: string,
    readonly k: number,
    private readonly cards: ReadonlyMap<string, ToolCard>,
    depth: number = k,
  ) {
    this.depth = Math.max(k, depth);
  }

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
      route = this.index.routeVector(this.partition, vector, { k: this.depth + 1 });
      this.routes.set(request, route);
    }
    const near = (await route).filter((o) => o.tool !== tool).slice(0, this.depth);
    const others = near.slice(0, this.k);
    return {
      wordings: await this.wordingTerms(request),
      vector,
      others,
      kth: others.length < this.k ? Number.NEGATIVE_INFINITY : others[this.k - 1].score,
      first: others[0]?.score ?? Number.NEGATIVE_INFINITY,
      near,
      nth: near.length < this.depth ? Number.NEGATIVE_INFINITY : near[this.depth - 1].score,
    };
  }

  /** What each tool's wordings add to its score for `request` (cached). */
  wordingTerms(request: string): Promise<Map<string, number>> {
    let t = this.terms.get(request);
    if (!t) {
      t = this.vector(request)
        .then((v) => this.index.wordingScores(this.partition, v))
        .then((scores) => {
          this.termsNow.set(request, scores);
          return scores;
        });
      this.terms.set(request, t);
    }
    return t;
  }

  /**
   * The first request (served by another tool) that giving `tool` the vectors `variant` would
   * push its serving tool out of the offered set for, or null. Scored as the index scores (card
   * and wordings), the candidate in place, on the {@link MAX_DISPLACEMENT_CHECKS} requests of
   * {@link WhatIf.nearOthers} the variant lifts `tool` most on: chosen by the embeddings, never
   * by shared words, so a wording that takes a request with synonyms is caught too.
   */
  async displaces(
    tool: string,
    query: string,
    variant: readonly number[][],
    served: readonly Pick<TurnRecord, "request" | "servedBy">[],
  ): Promise<Displacement | null> {
    const current = await this.cardUnit(tool);
    const variantUnit = variant.map(unit);
    const pool = await this.pool(served, tool);
    // The tool's current score on each request of its pool, read per candidate.
    const before = (pool.current ??= Float64Array.from(pool.units, (q) => maxDot(q, current)));
    const lift = (q: SparseVector, d: number): number => maxDot(q, variantUnit) - before[d];
    for (const { turn, unit: q } of await this.nearest(served, tool, lift, MAX_DISPLACEMENT_CHECKS)) {
      const servedBy = turn.servedBy!;
      const terms = this.termsNow.get(turn.request) ?? (await this.wordingTerms(turn.request));
      const bonus = terms.get(tool) ?? 0;
      const after = maxDot(q, variantUnit) + bonus;
      const serving = this.cardUnits.get(servedBy) ?? (await this.cardUnit(servedBy));
      // Cheap test first: a tool that does not outscore the serving tool cannot push it out.
      if (after <= maxDot(q, serving) + (terms.get(servedBy) ?? 0)) continue;
      const probe = await this.probe(turn.request, tool);
      const last = probe.others[this.k - 1];
      if (!last || last.tool !== servedBy) continue;
      const wasIn = maxDot(q, current) + bonus > probe.kth;
      if (!wasIn && after > probe.kth) return { query, request: turn.request, servedBy };
    }
    return null;
  }

  /**
   * Up to `max` of `served` that a tool other than `tool` served, those `closeness` rates highest
   * (ties in window order), from a pool of at most {@link MAX_NEAR_POOL} taken in
   * {@link spreadOrder} (the newest first, then spread over the whole window): a bounded look
   * that protects every kind of request the window holds, chosen by the index's embeddings, not
   * by the words a request shares with a candidate (with semantic embeddings a wording takes
   * requests it shares no word with). A request rated 0 or below is left out: candidates that do
   * not come closer to it (cosine or lift) cannot push its tool out, whatever the embeddings.
   * `closeness` reads the request's unit vector (nonzero entries only).
   */
  async nearOthers<T extends NearTurn>(
    served: readonly T[],
    tool: string,
    closeness: (request: SparseVector) => number,
    max: number,
  ): Promise<T[]> {
    return (await this.nearest(served, tool, closeness, max)).map((p) => p.turn);
  }

  /**
   * {@link nearOthers} with each request's unit vector. The pool is built once per `served` list
   * and tool (a review asks for it once per candidate); `closeness` is read once per distinct
   * request of it (with the request's place among them); only the requests that can be among the
   * best `max` are ordered.
   */
  private async nearest<T extends NearTurn>(
    served: readonly T[],
    tool: string,
    closeness: (request: SparseVector, distinct: number) => number,
    max: number,
  ): Promise<PoolEntry<T>[]> {
    const pool = await this.pool(served, tool);
    const byRequest = new Float64Array(pool.units.length);
    for (let d = 0; d < pool.units.length; d++) byRequest[d] = closeness(pool.units[d], d);
    const scores = new Float64Array(pool.turns.length);
    let positive = 0;
    for (let i = 0; i < scores.length; i++) if ((scores[i] = byRequest[pool.of[i]]) > 0) positive += 1;
    // The max-th best score bounds the best `max` (a numeric sort finds it): ties at it are
    // kept, so ordering the rest by score, then window order, gives the same `max` as a full sort.
    const floor = positive > max ? scores.filter((x) => x > 0).sort()[positive - max] : 0;
    const picked: number[] = [];
    for (let i = 0; i < scores.length; i++) if (scores[i] > 0 && scores[i] >= floor) picked.push(i);
    picked.sort((a, b) => scores[b] - scores[a] || a - b);
    return picked.slice(0, max).map((i) => ({ turn: pool.turns[i], unit: pool.units[pool.of[i]] }));
  }

  /**
   * Up to {@link MAX_NEAR_POOL} of `served` another tool than `tool` served, in
   * {@link spreadOrder}, with their distinct requests' unit vectors (cached).
   */
  private async pool<T extends NearTurn>(served: readonly T[], tool: string): Promise<NearPool<T>> {
    let byTool = this.pools.get(served);
    if (!byTool) this.pools.set(served, (byTool = new Map()));
    let pool = byTool.get(tool);
    if (!pool) {
      const turns: NearTurn[] = [];
      const of: number[] = [];
      const units: SparseVector[] = [];
      const place = new Map<SparseVector, number>();
      for (const i of spreadOrder(served.length)) {
        if (turns.length >= MAX_NEAR_POOL) break;
        const turn = served[i];
        if (turn.servedBy === undefined || turn.servedBy === tool) continue;
        const q = this.requestUnits.get(turn.request) ?? (await this.requestUnit(turn.request));
        let d = place.get(q);
        if (d === undefined) place.set(q, (d = units.push(q) - 1));
        turns.push(turn);
        of.push(d);
      }
      pool = { turns, of: Int32Array.from(of), units };
      byTool.set(tool, pool);
    }
    // The pool holds `served`'s own items, so they are of its type.
    return pool as NearPool<T>;
  }

  /**
   * How close a served request is to any of `texts` (the best cosine of their vectors): what
   * {@link nearOthers} ranks by when choosing the requests a candidate set is valued on.
   */
  async closenessTo(texts: readonly string[]): Promise<(request: SparseVector) => number> {
    const units = await Promise.all(texts.map(async (t) => unit(await this.vector(t))));
    return (request) => maxDot(request, units);
  }

  /**
   * Choose example wordings for `tool`, greedily and jointly: each step adds the candidate that
   * most improves routing on recorded requests, with the picks so far already on the card. A
   * request the tool served gains when the tool enters the offered set, reaches rank 1 or (when
   * deeper than the offered set) enters the near depth, and loses when the new text drops it from
   * one of those; a request another tool served loses when the new card pushes that tool out of
   * one of them. See {@link ExampleObjective} for the weights and the soft steps. Stops at
   * `limit` picks or when no candidate adds at least `minGain`.
   */
  async chooseExamples(
    tool: string,
    candidates: readonly Pick<ServedRequest, "requestId" | "request">[],
    requests: { own: readonly Pick<ServedRequest, "request">[]; others: readonly ServedRequest[] },
    limit: number,
    objective: ExampleObjective,
  ): Promise<ChosenExample[]> {
    return (await this.chooseExampleSet(tool, candidates, requests, { limit }, objective)).chosen;
  }

  /**
   * {@link chooseExamples} as a set: the card's examples and the candidates compete for its
   * slots. Picks fill the free `room` greedily; then, while picks are left (`limit`), the learned
   * example the set needs least (the smallest loss when it is taken out) gives way to the
   * candidate that most improves on it, if the exchange adds at least `minGain`. Every value is
   * the same objective over the same recorded requests (the tool's own, hits and misses, and the
   * other tools' it could push out), so an exchange is kept only when the set covers more.
   */
  async chooseExampleSet(
    tool: string,
    candidates: readonly Pick<ServedRequest, "requestId" | "request">[],
    requests: { own: readonly Pick<ServedRequest, "request">[]; others: readonly ServedRequest[] },
    slots: ExampleSlots,
    objective: ExampleObjective,
  ): Promise<ChosenSet> {
    const card = this.cards.get(tool);
    const limit = slots.limit;
    const room = Math.min(limit, slots.room ?? limit);
    const replaceable = [...new Set(slots.replaceable ?? [])];
    if (!card || limit <= 0 || candidates.length === 0) return { chosen: [], yielding: [] };
    const current = await this.cardUnit(tool);
    // Identical requests (same text, same serving tool) are one target counted as many times.
    const byKey = new Map<string, Target>();
    const add = async (request: string, servedBy: string | null): Promise<void> => {
      const key = `${servedBy ?? ""}\u0000${request}`;
      const seen = byKey.get(key);
      if (seen) {
        seen.count += 1;
        return;
      }
      const probe = await this.probe(request, tool);
      const vector = await this.requestUnit(request);
      const bonus = probe.wordings.get(tool) ?? 0;
      const target: Target = {
        vector,
        own: servedBy === null,
        probe,
        bonus,
        current: maxDot(vector, current) + bonus,
        count: 1,
      };
      if (servedBy !== null) {
        const place = probe.near.findIndex((o) => o.tool === servedBy);
        // A serving tool below the near depth is not offered (nor near) with or without this tool.
        if (place < 0) return;
        target.servedAt = { place: place + 1, score: probe.near[place].score };
      }
      byKey.set(key, target);
    };
    for (const r of requests.own) await add(r.request, null);
    for (const r of requests.others) await add(r.request, r.servedBy);
    const targets = [...byKey.values()];
    const valueOf = async (examples: readonly string[], out: readonly string[] = []): Promise<number> => {
      const vectors = (await this.variant(card, examples, out)).map(unit);
      let total = 0;
      for (const t of targets) total += t.count * this.change(t, maxDot(t.vector, vectors) + t.bonus, objective);
      return total;
    };
    // Lazy greedy: a candidate's last marginal value bounds its next one in the usual case, so
    // only the candidate on top is re-valued with the picks so far.
    const chosen: ChosenExample[] = [];
    let base = 0;
    const queue = candidates.map((c, order) => ({ c, bound: Number.POSITIVE_INFINITY, at: -1, order }));
    while (chosen.length < room && queue.length > 0) {
      queue.sort((a, b) => b.bound - a.bound || a.order - b.order);
      const top = queue[0];
      if (top.at === chosen.length) {
        if (top.bound < objective.minGain) break;
        queue.shift();
        chosen.push({ requestId: top.c.requestId, request: top.c.request, gain: top.bound });
        base += top.bound;
        continue;
      }
      top.bound = (await valueOf([...chosen.map((c) => c.request), top.c.request])) - base;
      top.at = chosen.length;
    }
    queue.sort((a, b) => a.order - b.order);
    // Fill: free slots left once no pick adds minGain take the most representative candidates
    // (they come in medoid order) that do no harm on the recorded requests: the recorded traffic
    // cannot tell which unseen wordings they will catch, but it can tell that they cost nothing.
    // A wording routing already offers the tool for still counts: its words widen what the set
    // catches of the requests not yet seen.
    for (let i = 0; i < queue.length && chosen.length < room;) {
      const { c } = queue[i];
      const value = (await valueOf([...chosen.map((x) => x.request), c.request])) - base;
      if (value < objective.fillGain) {
        i += 1;
        continue;
      }
      queue.splice(i, 1);
      chosen.push({ requestId: c.requestId, request: c.request, gain: value });
      base += value;
    }
    // Exchanges: only once the free slots are used (or none were), on a card holding learned examples.
    const yielding: string[] = [];
    const texts = (): string[] => chosen.map((c) => c.request);
    while (chosen.length < limit && queue.length > 0 && chosen.length >= room) {
      const left = replaceable.filter((r) => !yielding.includes(r));
      if (left.length === 0) break;
      // The example the set needs least: the one whose removal loses the least.
      let weakest: { text: string; without: number } | undefined;
      for (const text of left) {
        const without = await valueOf(texts(), [...yielding, text]);
        if (!weakest || without > weakest.without) weakest = { text, without };
      }
      // The candidates most promising so far (by their last marginal value), valued in its place.
      queue.sort((a, b) => b.bound - a.bound);
      let best: { at: number; value: number } | undefined;
      for (let i = 0; i < Math.min(queue.length, MAX_EXCHANGE_TRIES); i++) {
        const value = await valueOf([...texts(), queue[i].c.request], [...yielding, weakest!.text]);
        if (!best || value > best.value) best = { at: i, value };
      }
      if (!best || best.value - base < objective.minGain) break;
      const [{ c }] = queue.splice(best.at, 1);
      chosen.push({ requestId: c.requestId, request: c.request, gain: best.value - base, replaces: weakest!.text });
      yielding.push(weakest!.text);
      base = best.value;
    }
    return { chosen, yielding };
  }

  /** Value of `tool` scoring `score` instead of its current score on one target. */
  private change(t: Target, score: number, o: ExampleObjective): number {
    const above = (x: number, threshold: number): number =>
      o.softness > 0 ? 1 / (1 + Math.exp((threshold - x) / o.softness)) : Number(x > threshold);
    if (t.own) {
      const offered = above(score, t.probe.kth) - above(t.current, t.probe.kth);
      const first = above(score, t.probe.first) - above(t.current, t.probe.first);
      const near = this.depth > this.k ? above(score, t.probe.nth) - above(t.current, t.probe.nth) : 0;
      return weigh(offered, first, near, o);
    }
    // Another tool's request: this tool overtaking the serving tool pushes it out of the offered
    // set only from the k-th place, and off rank 1 only from the first.
    const { place, score: served } = t.servedAt!;
    const overtakes = above(score, served) - above(t.current, served);
    const at = (p: number): number => (place === p ? -overtakes : 0);
    return weigh(at(this.k), at(1), this.depth > this.k ? at(this.depth) : 0, o);
  }

  /**
   * The cheap first pass of choosing examples: up to `n` of `candidates` as medoids of `targets`
   * (greedy facility location on the request vectors: each step takes the candidate that most
   * raises the summed best similarity of every target to the chosen wordings, `covered` counting
   * as chosen already), in the order taken, so a caller filling slots in this order takes the
   * most representative first. Candidates that add nothing come last, in their given order. Dot
   * products over cached vectors only: no card is embedded.
   */
  async medoids<C extends Pick<ServedRequest, "request">>(
    candidates: readonly C[],
    targets: readonly Pick<ServedRequest, "request">[],
    covered: readonly string[],
    n: number,
  ): Promise<C[]> {
    const dense = await Promise.all(candidates.map(async (c) => unit(await this.vector(c.request))));
    const points = await Promise.all(targets.map((t) => this.requestUnit(t.request)));
    const best = new Float64Array(points.length);
    if (covered.length > 0) {
      const already = await Promise.all(covered.map(async (t) => unit(await this.vector(t))));
      points.forEach((p, i) => (best[i] = Math.max(0, maxDot(p, already))));
    }
    const sims = dense.map((d) => points.map((p) => maxDot(p, [d])));
    const out: C[] = [];
    const left = new Set(candidates.map((_, i) => i));
    while (out.length < n && left.size > 0) {
      let pick = -1;
      let gain = 0;
      for (const i of left) {
        let g = 0;
        for (let t = 0; t < points.length; t++) if (sims[i][t] > best[t]) g += sims[i][t] - best[t];
        if (g > gain) [pick, gain] = [i, g];
      }
      if (pick < 0) break;
      left.delete(pick);
      out.push(candidates[pick]);
      for (let t = 0; t < points.length; t++) best[t] = Math.max(best[t], sims[pick][t]);
    }
    for (const i of left) if (out.length < n) out.push(candidates[i]);
    return out;
  }

  /** A request's vector at unit length, nonzero entries only (cached): scores are then dot products. */
  private async requestUnit(request: string): Promise<SparseVector> {
    let v = this.requestUnits.get(request);
    if (!v) {
      v = sparse(unit(await this.vector(request)));
      this.requestUnits.set(request, v);
    }
    return v;
  }

  /** A registered tool's card vectors at unit length (cached). */
  private async cardUnit(tool: string): Promise<Float64Array[]> {
    let v = this.cardUnits.get(tool);
    if (!v) {
      v = (await this.cardVectors(tool)).map(unit);
      this.cardUnits.set(tool, v);
    }
    return v;
  }

  /** The words (tokens) of a text (cached). */
  words(text: string): Set<string> {
    let w = this.tokens.get(text);
    if (!w) {
      w = new Set(tokenize(text));
      this.tokens.set(text, w);
    }
    return w;
  }
}

/** A served request as {@link WhatIf.nearOthers} reads it. */
type NearTurn = Pick<TurnRecord, "request" | "servedBy">;

/** One request of a near pool, with its unit vector. */
interface PoolEntry<T extends NearTurn> {
  turn: T;
  unit: SparseVector;
}

/** A tool's near pool: its turns in spread order, each pointing at its distinct request's vector. */
interface NearPool<T extends NearTurn> {
  turns: T[];
  of: Int32Array;
  units: SparseVector[];
  /** The tool's current score on each of `units` (the re-check's, filled on first use). */
  current?: Float64Array;
}

/** A recorded request and the tool that served it. */
export interface ServedRequest {
  requestId: string;
  request: string;
  servedBy: string;
}

/** A wording chosen as an example, in the order chosen, with the net value it added. */
export interface ChosenExample {
  requestId: string;
  request: string;
  gain: number;
  /** The learned example it takes the slot of, when it was chosen in an exchange. */
  replaces?: string;
}

/** The slots {@link WhatIf.chooseExampleSet} fills. */
export interface ExampleSlots {
  /** Most picks (new examples) in all. */
  limit: number;
  /**
   * Free slots on the card: picks beyond them must each take a replaceable example's slot.
   * @default limit
   */
  room?: number;
  /**
   * Examples on the card that may give way to a better pick (the learned ones).
   * @default []
   */
  replaceable?: readonly string[];
}

/** What {@link WhatIf.chooseExampleSet} chose: the picks in order, and the examples giving way to them. */
export interface ChosenSet {
  chosen: ChosenExample[];
  yielding: string[];
}

/** Candidates valued in an exchange (the most promising by their last marginal value): bounds its cost. */
const MAX_EXCHANGE_TRIES = 8;

/** A recorded request as routing sees it now, with `tool` left out. */
interface Target {
  /** The request's vector, unit length, nonzero entries only. */
  vector: SparseVector;
  /** How many recorded requests it stands for. */
  count: number;
  own: boolean;
  probe: Probe;
  /** What `tool`'s wordings add to its score on this request. */
  bonus: number;
  /** Score of `tool` now (card and wordings, as the index scores it). */
  current: number;
  /** For another tool's request: its serving tool's place (1-based) and score among the others. */
  servedAt?: { place: number; score: number };
}

/** Rank a tool with this score would get (1-based), or null when it would not be offered. */
export function rankOf(score: number, probe: Probe): number | null {
  if (!(score > probe.kth)) return null;
  return 1 + probe.others.filter((o) => o.score >= score).length;
}
