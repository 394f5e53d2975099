import { speaksToModel } from "../detect.js";
/**
 * Evidence: what one tool's review rests on, with routing asked "what if" against the index as
 * it is now. Each of the tool's recorded missed requests (and each served request routing no
 * longer offers it for) is marked with whether routing would choose its wording as an example
 * (`pick`, `gain`: see {@link CoveredMiss}); the proposer is then given exactly that, as
 * {@link ToolEvidence}.
 *
 * Reads the index (cached per review in {@link ReviewRouting}), never the ledger.
 */
import { ToolIndex } from "../../routing/tool-index.js";
import type { ToolCard, TurnRecord } from "../../ledger/schema.js";
import { intersects } from "../../text/tokenize.js";
import type { Settings } from "../../settings.js";
import type { MissedRequest, ToolDetection } from "../detect.js";
import { buildToolEvidence, type NeighbourTool, type ToolEvidence } from "../proposer.js";
import type { CoveredMiss, TurnedDown } from "../types.js";
import { equivalent, turnedDownOf } from "../vet.js";
import { type ExampleObjective, indexScore, type Probe, rankOf, type ServedRequest, WhatIf } from "../what-if.js";
import { spread } from "../../internal.js";
import type { ReviewWindow } from "./gather.js";
import type { DueTool } from "./select.js";

/*
 * The evidence of one tool is read over the review's whole window: each bound below takes a
 * sample spread evenly over it (the newest included), not its newest end. Traffic often comes one
 * kind of request at a time, and a tool's newest requests alone are then one kind of its requests:
 * chosen on them, its examples say that kind and miss the rest (on MetaTool, at the fourth review
 * half of the finance tool's newest 100 requests were about NFT collections, one in eight of its
 * 691 in the window). See docs/learning.md.
 */

/** Missed requests read per tool and review. */
const MAX_MISSES = 400;

/** Distinct missed wordings tried as examples per tool and review (the most representative). */
const MAX_CANDIDATES = 24;

/** Requests this tool served that choosing its examples is scored on. */
const MAX_OWN_REQUESTS = 400;

/** Requests other tools served that choosing one tool's examples is scored on (those closest to a candidate). */
const MAX_OTHER_REQUESTS = 600;

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
  /** The tools routing offered for each request routed with a choice (not every tool sent). */
  offeredThen: ReadonlyMap<string, ReadonlySet<string>>;
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
    offeredThen: new Map(
      window.routes.filter((r) => !r.allSent).map((r) => [r.requestId, new Set(r.offered.map((o) => o.tool))]),
    ),
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
  /**
   * What detection found, its misses each with `pick` and `gain`: the recorded ones (routing may
   * offer the tool for some of them now: their wordings still compete as examples) and the
   * served requests routing no longer offers the tool for.
   */
  detection: Omit<ToolDetection, "misses"> & { misses: CoveredMiss[] };
  /** The misses routing still misses, with where routing puts each (for the ranks before and after). */
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
  const turnedDown = turnedDownOf(
    window.revisions.filter((r) => r.tool === card.name),
    window.calls.filter((c) => c.tool === card.name),
  );
  const { misses, covered, yielding } = await coverMisses(routing, card, td, window.settings, turnedDown);
  // The recorded misses, each with what its wording would do as an example.
  const detection = { ...td, misses };
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
 * The tool's recorded missed requests ({@link MAX_MISSES}, spread over the window) with the
 * routed requests it served that routing offered it for then but would not today
 * (`no_longer_offered`: a card changed since), oldest first, each marked with whether routing
 * would choose its wording as an example (see {@link WhatIf.chooseExampleSet}): scored on the
 * requests this tool served and on those other tools served closest to a candidate (by the index's
 * embeddings, whatever words they share).
 * Every recorded miss of routing is a candidate, whether routing still misses it or the learned
 * examples cover it now (the tool's own text alone would not): a wording covered in-sample still
 * catches the unseen ones like it, and the set is chosen for what it covers, not for what is left
 * open. A miss the tool's own text covers today needs no example. `covered` holds the misses
 * routing still misses (their ranks before and after go on the revision). A wording that alone
 * would push another tool out of routing for a request that tool served is never a candidate:
 * apply would withdraw it; nor is one the card already holds (the vet would refuse it
 * `already_kept`).
 */
async function coverMisses(
  routing: ReviewRouting,
  card: ToolCard,
  td: ToolDetection,
  settings: Settings,
  turnedDown: TurnedDown,
): Promise<{ misses: CoveredMiss[]; covered: CoveredMissRecord[]; yielding: string[] }> {
  const { whatIf } = routing;
  const servedOwn = routing.servedByTool.get(card.name) ?? [];
  const recorded = spread(td.misses, MAX_MISSES);
  // A routed request the tool served and did not miss was offered it then.
  const known = new Set(td.misses.map((m) => m.requestId));
  const ownServed = spread(servedOwn, MAX_OWN_REQUESTS);
  const moved: MissedRequest[] = ownServed
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
  const learned = card.learned.examples.filter((e) => e.source === "learned").map((e) => e.text);
  // The card without its learned examples: what the tool's own text covers.
  const bare = learned.length > 0 ? await whatIf.variant(card, [], learned) : current;
  const open: { miss: MissedRequest; probe: Probe }[] = [];
  const misses: MissedRequest[] = [];
  const recordedIds = new Set(recorded.map((m) => m.requestId));
  for (const miss of [...recorded, ...moved].sort((a, b) => at(a) - at(b))) {
    const probe = await whatIf.probe(miss.request, card.name);
    if (rankOf(indexScore(probe, card.name, ToolIndex.bestScore(probe.vector, current)), probe) === null) {
      misses.push(miss);
      open.push({ miss, probe });
      continue;
    }
    // Routing offers the tool for it today. It stays the set's to cover when it is a recorded
    // miss of routing (not one routing offered the tool for then, the model choosing another: a
    // confusion of that one, which a routing key cannot fix) that the learned examples are what
    // covers now: the tool's own text alone would still miss it.
    if (!recordedIds.has(miss.requestId) || !missedByRouting(routing, miss)) continue;
    if (
      bare === current ||
      rankOf(indexScore(probe, card.name, ToolIndex.bestScore(probe.vector, bare)), probe) !== null
    )
      continue;
    misses.push(miss);
  }
  const tokens = new Map(misses.map((miss) => [miss.requestId, whatIf.words(miss.request)]));
  const onCard = card.learned.examples.filter((e) => e.source !== "synthetic").map((e) => e.text);
  const eligible: MissedRequest[] = [];
  const seen = new Set<string>();
  for (let i = misses.length - 1; i >= 0; i--) {
    const miss = misses[i];
    const text = miss.request.toLowerCase().trim();
    const own = tokens.get(miss.requestId)!;
    if (seen.has(text) || own.size === 0 || miss.request.length > settings.maxLineLength) continue;
    seen.add(text);
    if (turnedDown.examples.some((t) => equivalent(miss.request, t))) continue;
    if (onCard.some((t) => equivalent(miss.request, t))) continue;
    // It must rest on enough misses it shares a word with (itself included).
    const cites = misses.filter((o) => o.requestId === miss.requestId || intersects(own, tokens.get(o.requestId)));
    if (cites.length < settings.minMisses) continue;
    eligible.push(miss);
  }
  // Cheap first pass: the most representative wordings of the tool's requests (medoids), then
  // the exact pass (routing's what-if) on those alone.
  const ownIds = new Set(ownServed.map((t) => t.requestId));
  const own = [...ownServed, ...misses.filter((m) => !ownIds.has(m.requestId))];
  const candidates: MissedRequest[] = [];
  for (const miss of await whatIf.medoids(eligible, own, learned, MAX_CANDIDATES)) {
    if (await whatIf.displaces(card.name, miss.request, await whatIf.variant(card, [miss.request]), routing.served))
      continue;
    candidates.push(miss);
  }
  // The card's slots: synthetic examples give way in the vet; learned ones compete with the candidates.
  const room = Math.max(0, settings.maxQueries - learned.length);
  const limit = settings.maxNewQueries;
  const none = {
    misses: misses.map((m): CoveredMiss => ({ ...m, pick: null })),
    covered: open.map(({ miss, probe }) => ({ miss, probe, pick: null })),
    yielding: [],
  };
  if (candidates.length === 0 || limit <= 0) return none;
  const closeness = await whatIf.closenessTo(candidates.map((c) => c.request));
  const others: ServedRequest[] = (
    await whatIf.nearOthers(routing.served, card.name, closeness, MAX_OTHER_REQUESTS)
  ).map((t) => ({ requestId: t.requestId, request: t.request, servedBy: t.servedBy! }));
  const { chosen, yielding } = await whatIf.chooseExampleSet(
    card.name,
    candidates,
    { own, others },
    { limit, room, replaceable: learned },
    routing.objective,
  );
  const picks = new Map(chosen.map((c, i) => [c.requestId, { pick: i + 1, gain: c.gain }]));
  const marked = (miss: MissedRequest): { pick: number | null; gain?: number } => ({
    pick: picks.get(miss.requestId)?.pick ?? null,
    gain: picks.get(miss.requestId)?.gain,
  });
  return {
    misses: misses.map((m): CoveredMiss => ({ ...m, ...marked(m) })),
    covered: open.map(({ miss, probe }) => ({ miss, probe, ...marked(miss) })),
    yielding,
  };
}

/** Whether routing, given a choice, left the tool out when the missed request was routed. */
function missedByRouting(routing: ReviewRouting, miss: MissedRequest): boolean {
  if (miss.how === "served_unoffered") return true;
  const offered = routing.offeredThen.get(miss.requestId);
  return offered !== undefined && !offered.has(miss.tool);
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
    before: rankOf(indexScore(probe, card.name, ToolIndex.bestScore(probe.vector, before)), probe),
    after: rankOf(indexScore(probe, card.name, ToolIndex.bestScore(probe.vector, after)), probe),
  }));
}
