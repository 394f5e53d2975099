/**
 * The re-check that guards wordings: a wording of one tool may pull another tool's requests away
 * from it, though they share no word (any embeddings: it scores with the index's own scores).
 * Before the index routes with its wordings, a bounded sample of the tools' served requests (their
 * kept wordings, each with its own left out) is routed twice with the index's scores: by the cards
 * alone, and by the cards plus every other wording. Where the request's own tool was offered by
 * its card (in the first `k`) and is pushed out by the wordings, the wordings that lifted a tool
 * over it are held back, round after round until no such request is left or nothing more can be
 * held back. Pure: the index gives the scores (`tool-index-wordings.ts`), this decides.
 */
import { spreadOrder } from "../internal.js";

/** One served request of the sample, scored by the index. */
export interface GuardCase {
  /** The tool that served it. */
  owner: string;
  /** Its own wording's key (left out of its hits). */
  key: string;
  /** Every tool's card score for it. */
  cards: ReadonlyMap<string, number>;
  /** Its best wording hits over the partition: tool, wording key, similarity. */
  hits: readonly WordingHit[];
}

/** A wording similar to a request: its tool, its key and the similarity. */
export interface WordingHit {
  tool: string;
  key: string;
  score: number;
}

/** A wording held back by the guard. */
export interface HeldWording {
  tool: string;
  key: string;
}

/** Options of {@link heldBackWordings}. */
export interface GuardDecisionOptions {
  /** Tools offered per request (the partition's `routingK`). */
  k: number;
  /** Wordings summed per tool (`wordings.best`). */
  best: number;
  /** Rounds at most (each holds back what the last left losing). */
  rounds?: number;
}

/** A tool's wording term for one case: the sum of its `best` best hits not held back, and their keys. */
function terms(hits: readonly WordingHit[], held: ReadonlySet<string>, own: string, best: number) {
  const byTool = new Map<string, { sum: number; keys: string[] }>();
  for (const hit of hits) {
    const id = heldId(hit.tool, hit.key);
    if (hit.key === own || held.has(id) || hit.score <= 0) continue;
    let t = byTool.get(hit.tool);
    if (!t) byTool.set(hit.tool, (t = { sum: 0, keys: [] }));
    if (t.keys.length >= best) continue;
    // Hits come best first: the first `best` of a tool are its best.
    t.sum += hit.score;
    t.keys.push(id);
  }
  return byTool;
}

function heldId(tool: string, key: string): string {
  return `${tool}\u0000${key}`;
}

/** The tools ranked strictly above `owner` by `score` (ties broken by name, as routing does). */
function above(owner: string, scores: ReadonlyMap<string, number>): string[] {
  const mine = scores.get(owner) ?? Number.NEGATIVE_INFINITY;
  const out: string[] = [];
  for (const [tool, s] of scores) if (s > mine || (s === mine && tool < owner)) out.push(tool);
  return out;
}

/**
 * The wordings to hold back: see the module doc. A case counts only where the owner's card alone
 * put it in the first `k`; for each such case the wordings push out, the wordings of every tool
 * that their terms moved above the owner are held back.
 */
export function heldBackWordings(cases: readonly GuardCase[], options: GuardDecisionOptions): HeldWording[] {
  const { k, best } = options;
  const held = new Set<string>();
  const offeredByCard = cases.filter((c) => c.cards.has(c.owner) && above(c.owner, c.cards).length < k);
  let open = offeredByCard;
  for (let round = 0; round < (options.rounds ?? 3) && open.length > 0; round++) {
    const before = held.size;
    const still: GuardCase[] = [];
    for (const c of open) {
      const t = terms(c.hits, held, c.key, best);
      const scores = new Map<string, number>();
      for (const [tool, card] of c.cards) scores.set(tool, card + (t.get(tool)?.sum ?? 0));
      const over = above(c.owner, scores);
      if (over.length < k) continue;
      const cardsAbove = new Set(above(c.owner, c.cards));
      for (const tool of over) if (!cardsAbove.has(tool)) for (const id of t.get(tool)?.keys ?? []) held.add(id);
      still.push(c);
    }
    if (held.size === before) break;
    open = still;
  }
  return [...held].map((id) => {
    const [tool, key] = id.split("\u0000");
    return { tool, key };
  });
}

/**
 * The sample the guard checks: up to `size` stored wordings, taken round-robin over the tools (each
 * tool's in spread order), so every tool with wordings is checked, the smallest first in full.
 */
export function guardSample(
  stored: ReadonlyMap<string, ReadonlyMap<string, string>>,
  size: number,
): { tool: string; key: string; text: string }[] {
  const lists = [...stored]
    .sort((a, b) => a[0].localeCompare(b[0]))
    .map(([tool, kept]) => {
      const entries = [...kept];
      return [...spreadOrder(entries.length)].map((i) => ({ tool, key: entries[i][0], text: entries[i][1] }));
    });
  const out: { tool: string; key: string; text: string }[] = [];
  for (let i = 0; out.length < size; i++) {
    let any = false;
    for (const list of lists) {
      if (i >= list.length) continue;
      any = true;
      out.push(list[i]);
      if (out.length >= size) break;
    }
    if (!any) break;
  }
  return out;
}
