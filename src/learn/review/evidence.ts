import { speaksToModel } from "../detect.js";
/**
 * Evidence: what one tool's review rests on, with routing asked "what if" against the index as
 * it is now. Of the tool's missed requests, only those routing still misses count, each marked
 * with whether routing would choose its wording as an example (`pick`, `gain`: see
 * {@link CoveredMiss}); the proposer is then given exactly that, as {@link ToolEvidence}.
 *
 * Reads the index (cached per review in {@link ReviewRouting}), never the ledger.
 */
import { ToolIndex } from "../../index/tool-index.js";
import type { ToolCard, TurnRecord } from "../../ledger/schema.js";
import { intersects } from "../../text/tokenize.js";
import type { Settings } from "../../settings.js";
import type { MissedRequest, ToolDetection } from "../detect.js";
import { buildToolEvidence, type NeighbourTool, type ToolEvidence } from "../proposer.js";
import type { CoveredMiss, TurnedDown } from "../types.js";
import { equivalent, turnedDownOf } from "../vet.js";
import { type ExampleObjective, type Probe, rankOf, type ServedRequest, WhatIf } from "../what-if.js";
import type { ReviewWindow } from "./gather.js";
import type { DueTool } from "./select.js";

/** Missed requests read per tool and review (the newest): ample evidence for 4 new examples. */
const MAX_MISSES = 50;

/** Distinct missed wordings tried as examples per tool and review (the newest). */
const MAX_CANDIDATES = 24;

/** Requests this tool served that choosing its examples is scored on (the newest). */
const MAX_OWN_REQUESTS = 100;

/** Requests other tools served that choosing one tool's examples is scored on (the newest sharing a word). */
const MAX_OTHER_REQUESTS = 300;

/** Routing as one review sees it: the index's answers (cached) and the window's served requests. */
export interface ReviewRouting {
  whatIf: WhatIf;
  objective: ExampleObjective;
  /** The window's requests some tool served, in turn order. */
  served: readonly TurnRecord[];
  /** The same, per serving tool. */
  servedByTool: ReadonlyMap<string, readonly TurnRecord[]>;
  /** Requests routed with a choice (not every tool sent) before the partition's last card change. */
  routedBefore: ReadonlySet<string>;
  /** Each request's place in the window's turns. */
  position: ReadonlyMap<string, number>;
  /** Every registered tool, as a proposer sees its neighbours. */
  neighbours: readonly NeighbourTool[];
}

/** The routing side of one review over `window`, against `index` as it is now. */
export function reviewRouting(window: ReviewWindow, index: ToolIndex, objective: ExampleObjective): ReviewRouting {
  const cards = new Map(window.cards.map((c) => [c.name, c]));
  const whatIf = new WhatIf(index, window.partition, window.settings.routingK, cards, objective.nearDepth);
  const served = window.turns.filter((t) => t.servedBy !== undefined);
  const servedByTool = new Map<string, TurnRecord[]>();
  for (const t of served) {
    const list = servedByTool.get(t.servedBy!);
    if (list) list.push(t);
    else servedByTool.set(t.servedBy!, [t]);
  }
  // Requests routed with a choice before the last card change: routing may offer other tools now.
  const lastChange = window.cards.reduce((latest, c) => Math.max(latest, c.updatedAt), 0);
  const routedBefore = new Set(window.routes.filter((r) => !r.allSent && r.at <= lastChange).map((r) => r.requestId));
  return {
    whatIf,
    objective,
    served,
    servedByTool,
    routedBefore,
    position: new Map(window.turns.map((t, i) => [t.requestId, i])),
    neighbours: window.cards.map((c) => ({ name: c.name, description: c.author.description })),
  };
}

/** A missed request routing still misses, where routing puts it, and what its wording would fix. */
export interface CoveredMissRecord {
  miss: MissedRequest;
  probe: Probe;
  /** Order in which routing chose this wording as an example; null when it did not. */
  pick: number | null;
  gain?: number;
}

/** What one tool's review rests on. */
export interface ToolReviewEvidence {
  card: ToolCard;
  /** What detection found, with only the misses routing still misses, each with `pick` and `gain`. */
  detection: Omit<ToolDetection, "misses"> & { misses: CoveredMiss[] };
  /** The same misses with where routing puts each (for the ranks before and after). */
  covered: CoveredMissRecord[];
  /** What an operator turned down for this tool. */
  turnedDown: TurnedDown;
  /** What the proposer is given. */
  evidence: ToolEvidence;
  /**
   * Learned examples on the card that routing's choice of the set no longer needs, in the order
   * they give way to its picks beyond the card's free slots (see {@link WhatIf.chooseExampleSet}).
   */
  yielding: string[];
}

/** The evidence of one due tool: misses covered against the index, the proposer's view built. */
export async function buildEvidence(
  routing: ReviewRouting,
  window: ReviewWindow,
  due: DueTool,
): Promise<ToolReviewEvidence> {
  const { card, detection: td } = due;
  const turnedDown = turnedDownOf(window.revisions.filter((r) => r.tool === card.name));
  const { covered, yielding } = await coverMisses(routing, card, td, window.settings, turnedDown);
  // Only misses routing still misses count, each with what its wording would fix.
  const detection = { ...td, misses: covered.map((m): CoveredMiss => ({ ...m.miss, pick: m.pick, gain: m.gain })) };
  const evidence = buildToolEvidence({
    card,
    detection,
    tools: routing.neighbours,
    settings: window.settings,
    turnedDown,
  });
  return { card, detection, covered, turnedDown, evidence, yielding };
}

/**
 * The tool's missed requests that routing still misses today (an earlier revision may have
 * fixed some), with the routed requests it served that routing offered it for then but would not
 * today (`no_longer_offered`: a card changed since), oldest first, each marked with whether
 * routing would choose its wording as an example (see {@link WhatIf.chooseExamples}): scored on
 * the requests this tool served and on those other tools served that share a word with a
 * candidate. A wording that alone would push another tool out of routing for a request that
 * tool served is never a candidate: apply would withdraw it.
 */
async function coverMisses(
  routing: ReviewRouting,
  card: ToolCard,
  td: ToolDetection,
  settings: Settings,
  turnedDown: TurnedDown,
): Promise<{ covered: CoveredMissRecord[]; yielding: string[] }> {
  const { whatIf } = routing;
  const servedOwn = routing.servedByTool.get(card.name) ?? [];
  const recorded = td.misses.slice(-MAX_MISSES);
  // A routed request the tool served and did not miss was offered it then.
  const known = new Set(td.misses.map((m) => m.requestId));
  const moved: MissedRequest[] = servedOwn
    .slice(-MAX_OWN_REQUESTS)
    .filter((t) => routing.routedBefore.has(t.requestId) && !known.has(t.requestId) && !speaksToModel(t))
    .map((t) => ({
      tool: card.name,
      requestId: t.requestId,
      request: t.request,
      how: "no_longer_offered",
      threadId: t.threadId,
    }));
  const at = (m: MissedRequest): number => routing.position.get(m.requestId) ?? -1;
  const current = await whatIf.cardVectors(card.name);
  const open: { miss: MissedRequest; probe: Probe }[] = [];
  for (const miss of [...recorded, ...moved].sort((a, b) => at(a) - at(b))) {
    const probe = await whatIf.probe(miss.request, card.name);
    if (rankOf(ToolIndex.bestScore(probe.vector, current), probe) !== null) continue;
    open.push({ miss, probe });
  }
  const tokens = new Map(open.map(({ miss }) => [miss.requestId, whatIf.words(miss.request)]));
  const eligible: MissedRequest[] = [];
  const seen = new Set<string>();
  for (let i = open.length - 1; i >= 0; i--) {
    const { miss } = open[i];
    const text = miss.request.toLowerCase().trim();
    const own = tokens.get(miss.requestId)!;
    if (seen.has(text) || own.size === 0 || miss.request.length > settings.maxLineLength) continue;
    seen.add(text);
    if (turnedDown.examples.some((t) => equivalent(miss.request, t))) continue;
    // It must rest on enough misses it shares a word with (itself included).
    const cites = open.filter(
      (o) => o.miss.requestId === miss.requestId || intersects(own, tokens.get(o.miss.requestId)),
    );
    if (cites.length < settings.minMisses) continue;
    eligible.push(miss);
  }
  // Cheap first pass: the most representative wordings of the tool's requests (medoids), then
  // the exact pass (routing's what-if) on those alone.
  const learned = card.learned.examples.filter((e) => e.source === "learned").map((e) => e.text);
  const ownServed = servedOwn.slice(-MAX_OWN_REQUESTS);
  const ownIds = new Set(ownServed.map((t) => t.requestId));
  const own = [...ownServed, ...open.map((o) => o.miss).filter((m) => !ownIds.has(m.requestId))];
  const candidates: MissedRequest[] = [];
  for (const miss of await whatIf.medoids(eligible, own, learned, MAX_CANDIDATES)) {
    if (await whatIf.displaces(card.name, miss.request, await whatIf.variant(card, [miss.request]), routing.served))
      continue;
    candidates.push(miss);
  }
  // The card's slots: synthetic examples give way in the vet; learned ones compete with the candidates.
  const room = Math.max(0, settings.maxQueries - learned.length);
  const limit = settings.maxNewQueries;
  const none = { covered: open.map(({ miss, probe }) => ({ miss, probe, pick: null })), yielding: [] };
  if (candidates.length === 0 || limit <= 0) return none;
  const words = new Set(candidates.flatMap((c) => [...tokens.get(c.requestId)!]));
  const others: ServedRequest[] = [];
  for (let i = routing.served.length - 1; i >= 0 && others.length < MAX_OTHER_REQUESTS; i--) {
    const t = routing.served[i];
    if (t.servedBy === card.name || !intersects(words, whatIf.words(t.request))) continue;
    others.push({ requestId: t.requestId, request: t.request, servedBy: t.servedBy! });
  }
  const { chosen, yielding } = await whatIf.chooseExampleSet(
    card.name,
    candidates,
    { own, others },
    { limit, room, replaceable: learned },
    routing.objective,
  );
  const picks = new Map(chosen.map((c, i) => [c.requestId, { pick: i + 1, gain: c.gain }]));
  return {
    covered: open.map(({ miss, probe }) => ({
      miss,
      probe,
      pick: picks.get(miss.requestId)?.pick ?? null,
      gain: picks.get(miss.requestId)?.gain,
    })),
    yielding,
  };
}

/**
 * For each missed request routing still misses, the tool's routing rank before and after the
 * kept examples are added (and the synthetic ones that give way removed); none when no example
 * was kept.
 */
export async function routingRanks(
  routing: ReviewRouting,
  evidence: Pick<ToolReviewEvidence, "card" | "covered">,
  added: readonly string[],
  displaced: readonly string[],
): Promise<{ request: string; before: number | null; after: number | null }[]> {
  const { card, covered } = evidence;
  if (covered.length === 0 || added.length === 0) return [];
  const before = await routing.whatIf.cardVectors(card.name);
  const after = await routing.whatIf.variant(card, added, displaced);
  return covered.map(({ miss, probe }) => ({
    request: miss.request,
    before: rankOf(ToolIndex.bestScore(probe.vector, before), probe),
    after: rankOf(ToolIndex.bestScore(probe.vector, after), probe),
  }));
}
