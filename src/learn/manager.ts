import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { RunnableConfig } from "@langchain/core/runnables";
import { InvalidInput, NotFound, RevisionConflict } from "../errors.js";
import { ToolIndex } from "../index/tool-index.js";
import { type UsageFlag, usageFlags } from "../index/usage-flags.js";
import { DEFAULT_PARTITION, timeOrderedId } from "../ledger/keys.js";
import type { Ledger } from "../ledger/ledger.js";
import type { CallRecord, Evidence, Learned, Refusal, Revision, ToolCard, TurnRecord } from "../ledger/schema.js";
import { containsFingerprint } from "../text/mask.js";
import { definedOnly } from "../internal.js";
import { parseSettings, type Settings, type SettingsInput } from "../settings.js";
import { rankByCoverage } from "./coverage.js";
import { type MissedRequest, type ToolDetection, detect } from "./detect.js";
import { DeterministicProposer } from "./deterministic-proposer.js";
import { buildExampleCall } from "./example-call.js";
import { ModelProposer } from "./model-proposer.js";
import { buildToolEvidence, type Proposal, type Proposer } from "./proposer.js";
import {
  equivalent,
  evidenceMaps,
  mergeExamples,
  type TurnedDown,
  turnedDownOf,
  vetExampleCall,
  vetProposal,
} from "./vet.js";
import { intersects } from "../text/tokenize.js";
import {
  DEFAULT_EXAMPLE_OBJECTIVE,
  type Displacement,
  type ExampleObjective,
  type Probe,
  type ServedRequest,
  WhatIf,
  rankOf,
} from "./what-if.js";

/** Who applies a revision under `autoApply`. */
export const AUTO_APPROVER = "tool-lessons:auto";

/** Options of {@link LessonManager}. */
export interface LessonManagerOptions {
  /** The ledger: records, cards, revisions, settings. */
  ledger: Ledger;
  /** The routing index (updated on apply and undo; asked "what if" during review). */
  index: ToolIndex;
  /**
   * Who proposes lessons. Ignored when `model` is given.
   * @default a DeterministicProposer choosing examples by routing coverage
   */
  proposer?: Proposer;
  /** A chat model: lessons are then proposed by a {@link ModelProposer} over it. */
  model?: BaseChatModel;
  /**
   * How routing values a candidate example (see {@link WhatIf.chooseExamples}).
   * @default DEFAULT_EXAMPLE_OBJECTIVE
   */
  exampleObjective?: Partial<ExampleObjective>;
}

/** Options of {@link LessonManager.review}. */
export interface ReviewOptions {
  /** @default "default" */
  partition?: string;
  /** Propose and return revisions without storing anything. @default false */
  dryRun?: boolean;
  /** Apply every revision at once, approved by {@link AUTO_APPROVER}. @default false */
  autoApply?: boolean;
  /** Settings for this review only, over the partition's stored ones. */
  config?: SettingsInput;
  /** Review only these tools. */
  tools?: readonly string[];
}

/** What a review returns. */
export interface Review {
  partition: string;
  /** Revisions proposed (applied too, under `autoApply`), one per tool with something kept. */
  revisions: Revision[];
  /** Everything refused, per tool. */
  refused: { tool: string; refusal: Refusal }[];
  /** Tools not reviewed this time, and why. */
  skipped: { tool: string; reason: "revision_waiting" | "no_new_calls" | "too_little_evidence" | "over_max_tools" }[];
  /** Usage flags, for a person to read. */
  flags: UsageFlag[];
}

interface PartitionOption {
  /** @default "default" */
  partition?: string;
}

/** What one review reads: settings (stored, with the per-call override), cards, calls and turns. */
interface Window {
  settings: Settings;
  cards: ToolCard[];
  calls: CallRecord[];
  turns: TurnRecord[];
}

/**
 * The operator's API: review the ledger for lessons, apply (with who approved), dismiss, undo,
 * history, settings and usage flags. Every change is a revision in the ledger; the index is kept
 * in step on apply and undo.
 */
export class LessonManager {
  readonly ledger: Ledger;
  readonly index: ToolIndex;
  readonly proposer: Proposer;
  private readonly objective: ExampleObjective;

  constructor(options: LessonManagerOptions) {
    this.ledger = options.ledger;
    this.objective = { ...DEFAULT_EXAMPLE_OBJECTIVE, ...definedOnly(options.exampleObjective ?? {}) };
    this.index = options.index;
    this.proposer = options.model
      ? new ModelProposer(options.model)
      : (options.proposer ?? new DeterministicProposer({ rankExamples: rankByCoverage }));
  }

  /** Store settings for a partition (validated; unknown keys refused). */
  async configure(settings: SettingsInput, options: PartitionOption = {}): Promise<Settings> {
    return this.ledger.configure(options.partition ?? DEFAULT_PARTITION, settings);
  }

  /** Revisions of a tool, newest first. */
  async history(tool: string, options: PartitionOption = {}): Promise<Revision[]> {
    return this.ledger.listRevisions(options.partition ?? DEFAULT_PARTITION, { tool });
  }

  /** Usage flags of a partition (`retrieved_never_called`, `never_retrieved`). */
  async flags(options: PartitionOption & { config?: SettingsInput } = {}): Promise<UsageFlag[]> {
    const partition = options.partition ?? DEFAULT_PARTITION;
    const settings = parseSettings(options.config ?? {}, await this.ledger.getSettings(partition));
    const [cards, routes, calls] = await Promise.all([
      this.ledger.listCards(partition),
      this.ledger.listRoutes(partition),
      this.ledger.listCalls(partition),
    ]);
    return usageFlags({ routes, calls, tools: cards.map((c) => c.name), settings });
  }

  /**
   * Read the partition's records, find what repeats, propose lessons per tool, vet them, and store
   * each tool's kept lessons as a proposed revision. A tool with a revision waiting is not
   * reviewed; a tool with no new calls since its last review costs no model call (only a proposer
   * that calls no model looks at it again: routing may have moved since); at most `maxTools`
   * tools, those with new calls first, then those with the most failed calls. What an operator
   * dismissed or undid for a tool is not proposed again (refused `turned_down`).
   */
  async review(options: ReviewOptions = {}, config?: RunnableConfig): Promise<Review> {
    const partition = options.partition ?? DEFAULT_PARTITION;
    const w = await this.window(partition, options.config);
    const routes = await this.ledger.listRoutes(partition);
    const names = w.cards.map((c) => c.name);
    const detection = detect({ turns: w.turns, routes, calls: w.calls, tools: names, settings: w.settings });
    const revisionsByTool = groupBy(await this.ledger.listRevisions(partition), (r) => r.tool);
    const waiting = new Set(
      [...revisionsByTool].filter(([, rs]) => rs.some((r) => r.status === "proposed")).map(([tool]) => tool),
    );
    const marks = await this.ledger.reviewMarks(partition);
    const wanted = options.tools ? new Set(options.tools) : undefined;

    const review: Review = { partition, revisions: [], refused: [], skipped: [], flags: [] };
    const due: { card: ToolCard; td: ToolDetection; fresh: boolean }[] = [];
    for (const card of w.cards) {
      if (wanted && !wanted.has(card.name)) continue;
      const td = detection.tools.get(card.name);
      if (!td) continue;
      if (waiting.has(card.name)) {
        review.skipped.push({ tool: card.name, reason: "revision_waiting" });
        continue;
      }
      const mark = marks.get(card.name);
      // A tool never called is always skipped; one with no new calls unless the proposer calls no model.
      const fresh = td.lastCallId !== undefined && (mark === undefined || td.lastCallId > mark);
      if (td.lastCallId === undefined || (!fresh && this.proposer.callsModel !== false)) {
        review.skipped.push({ tool: card.name, reason: "no_new_calls" });
        continue;
      }
      const s = w.settings;
      const enough =
        td.calls >= s.minCalls || td.misses.length >= s.minMisses || td.confusions.length >= s.minConfusions;
      if (!enough) {
        review.skipped.push({ tool: card.name, reason: "too_little_evidence" });
        continue;
      }
      due.push({ card, td, fresh });
    }
    // Tools with new calls first: a second look never takes a place under maxTools from them.
    due.sort(
      (a, b) =>
        Number(b.fresh) - Number(a.fresh) ||
        failedCount(b.td) - failedCount(a.td) ||
        b.td.misses.length + b.td.confusions.length - (a.td.misses.length + a.td.confusions.length),
    );
    for (const { card } of due.slice(w.settings.maxTools))
      review.skipped.push({ tool: card.name, reason: "over_max_tools" });

    const key = await this.ledger.fingerprintKey();
    const fingerprints = new Set<string>();
    for (const call of w.calls) for (const f of call.fingerprints) fingerprints.add(f);
    const containsValue = (text: string): boolean => containsFingerprint(text, fingerprints, key);
    const neighbours = w.cards.map((c) => ({ name: c.name, description: c.author.description }));
    const newMarks = new Map<string, string>();

    const whatIf = new WhatIf(
      this.index,
      partition,
      w.settings.routingK,
      new Map(w.cards.map((c) => [c.name, c])),
      this.objective.nearDepth,
    );
    const served = w.turns.filter((t) => t.servedBy !== undefined);
    const servedByTool = groupBy(served, (t) => t.servedBy!);
    // Requests routed with a choice before the last card change: routing may offer other tools now.
    const lastChange = w.cards.reduce((latest, c) => Math.max(latest, c.updatedAt), 0);
    const routedBefore = new Set(routes.filter((r) => !r.allSent && r.at <= lastChange).map((r) => r.requestId));
    const position = new Map(w.turns.map((t, i) => [t.requestId, i]));
    for (const { card, td } of due.slice(0, w.settings.maxTools)) {
      const turnedDown = turnedDownOf(revisionsByTool.get(card.name) ?? []);
      const own = servedByTool.get(card.name) ?? [];
      const misses = await this.coverMisses(
        whatIf,
        card,
        td,
        { all: served, own, routedBefore, position },
        w.settings,
        turnedDown,
      );
      // Only misses routing still misses count, each with what its wording would fix.
      const detection = { ...td, misses: misses.map((m) => ({ ...m.miss, pick: m.pick, gain: m.gain })) };
      const evidence = buildToolEvidence({ card, detection, tools: neighbours, settings: w.settings, turnedDown });
      const proposal = await this.proposer.propose(evidence, config);
      // A model call that failed (provider down, timeout) reviewed nothing: ask again next time.
      if (td.lastCallId && proposal.rejected?.reason !== "model_error") newMarks.set(card.name, td.lastCallId);
      const vetted = vetProposal(proposal, {
        tool: card.name,
        registeredTools: names,
        settings: w.settings,
        learned: card.learned,
        ...evidenceMaps(detection),
        containsValue,
        turnedDown,
      });
      const refused = [...vetted.refused];
      if (proposal.rejected) {
        refused.push({ kind: "note", text: "", reason: proposal.rejected.reason, detail: proposal.rejected.detail });
      }
      let callExample: string | null = null;
      const built = buildExampleCall(td.successes, td.refusedCount, w.settings.minFailures);
      if (built !== null && built !== card.learned.exampleCall?.text) {
        const r = vetExampleCall(built, { containsValue, settings: w.settings, turnedDown });
        if (r) refused.push(r);
        else callExample = built;
      }
      for (const r of refused) review.refused.push({ tool: card.name, refusal: r });
      const kept = vetted.kept;
      if (kept.notes.length + kept.examples.length + kept.notFor.length === 0 && callExample === null) continue;

      const now = Date.now();
      const revision: Revision = {
        v: 1,
        id: timeOrderedId(now),
        partition,
        tool: card.name,
        status: "proposed",
        notesAdded: kept.notes.map((n) => n.text),
        queriesAdded: kept.examples.map((e) => e.text),
        avoidAdded: kept.notFor.map((n) => ({ text: n.text, tool: n.tool })),
        callExample,
        queriesWithdrawn: [],
        displaced: [],
        queriesDisplaced: vetted.displaced,
        evidence: citedEvidence(detection, kept),
        ranks: await this.ranks(
          whatIf,
          card,
          misses,
          kept.examples.map((e) => e.text),
          vetted.displaced,
        ),
        refused,
        proposer: this.proposer.name,
        cardVersionBefore: card.version,
        reviewedThrough: td.lastCallId,
        createdAt: now,
        updatedAt: now,
      };
      review.revisions.push(revision);
    }

    if (!options.dryRun) {
      for (const revision of review.revisions) await this.ledger.putRevision(revision);
      await this.ledger.markReviewed(partition, newMarks);
      if (options.autoApply) {
        for (let i = 0; i < review.revisions.length; i++) {
          review.revisions[i] = await this.applyRevision(
            review.revisions[i].id,
            { partition, approvedBy: AUTO_APPROVER, config: options.config },
            w.turns,
          );
        }
      }
    }
    review.flags = usageFlags({ routes, calls: w.calls, tools: names, settings: w.settings });
    return review;
  }

  /**
   * Apply a proposed revision. Routing is checked again for requests other tools served: an
   * example that would push the serving tool out of the offered set is withdrawn (notes stay),
   * and the revision records which and why. The card and the revision are written together.
   * @throws NotFound, RevisionConflict (not proposed, or the card changed since)
   */
  async apply(
    id: string,
    options: PartitionOption & { approvedBy: string; config?: SettingsInput },
  ): Promise<Revision> {
    return this.applyRevision(id, options);
  }

  /** {@link apply}, with the turn records already read (a review applying its own revisions). */
  private async applyRevision(
    id: string,
    options: PartitionOption & { approvedBy: string; config?: SettingsInput },
    turns?: readonly TurnRecord[],
  ): Promise<Revision> {
    if (!options.approvedBy?.trim()) throw new InvalidInput("apply() needs `approvedBy`: who approved this revision.");
    const partition = options.partition ?? DEFAULT_PARTITION;
    const revision = await this.ledger.requireRevision(partition, id);
    if (revision.status !== "proposed") {
      throw new RevisionConflict(`Revision ${id} is ${revision.status}; only a proposed revision can be applied.`, {
        context: { id, status: revision.status },
      });
    }
    const card = await this.requireCard(partition, revision.tool);
    if (card.version !== revision.cardVersionBefore) {
      throw new RevisionConflict(
        `The card of "${revision.tool}" changed since revision ${id} was proposed (version ${revision.cardVersionBefore} → ${card.version}); review again.`,
        { context: { id, tool: revision.tool } },
      );
    }
    const settings = parseSettings(options.config ?? {}, await this.ledger.getSettings(partition));
    const displacedRequests = await this.displacements(partition, card, revision.queriesAdded, settings, turns);
    const withdrawn = [...new Set(displacedRequests.map((d) => d.query))];
    const added = revision.queriesAdded.filter((q) => !withdrawn.includes(q));
    const giveWay = yielding(card.learned, added, revision.queriesDisplaced, settings.maxQueries);

    const now = Date.now();
    const learned: Learned = {
      examples: mergeExamples(
        card.learned.examples,
        added.map((text) => ({ text, cites: [] })),
        giveWay,
        id,
        now,
      ),
      notes: [...card.learned.notes, ...revision.notesAdded.map((text) => ({ text, revisionId: id }))],
      notFor: [...card.learned.notFor, ...revision.avoidAdded.map((n) => ({ ...n, revisionId: id }))],
      exampleCall:
        revision.callExample !== null ? { text: revision.callExample, revisionId: id } : card.learned.exampleCall,
    };
    const applied: Revision = {
      ...revision,
      status: "applied",
      approvedBy: options.approvedBy,
      queriesWithdrawn: withdrawn,
      displaced: displacedRequests,
      queriesDisplaced: giveWay,
      learnedBefore: card.learned,
      cardVersionAfter: card.version + 1,
      updatedAt: now,
    };
    const [saved] = await this.ledger.commit(partition, {
      cards: [{ ...card, learned }],
      revisions: [applied],
      expectVersion: card.version,
    });
    await this.index.upsertCards(partition, [saved]);
    return applied;
  }

  /** Dismiss a proposed revision. @throws NotFound, RevisionConflict */
  async dismiss(id: string, options: PartitionOption & { by?: string } = {}): Promise<Revision> {
    const partition = options.partition ?? DEFAULT_PARTITION;
    const revision = await this.ledger.requireRevision(partition, id);
    if (revision.status !== "proposed") {
      throw new RevisionConflict(`Revision ${id} is ${revision.status}; only a proposed revision can be dismissed.`);
    }
    const dismissed: Revision = { ...revision, status: "dismissed", closedBy: options.by, updatedAt: Date.now() };
    await this.ledger.putRevision(dismissed);
    return dismissed;
  }

  /**
   * Take back the newest applied revision of a tool, restoring what it replaced (synthetic
   * examples that gave way included).
   * @throws NotFound (nothing applied), RevisionConflict (the card was edited since)
   */
  async undo(tool: string, options: PartitionOption & { approvedBy: string }): Promise<Revision> {
    if (!options.approvedBy?.trim()) throw new InvalidInput("undo() needs `approvedBy`: who approved the undo.");
    const partition = options.partition ?? DEFAULT_PARTITION;
    const [revision] = await this.ledger.listRevisions(partition, { tool, status: "applied" });
    if (!revision || !revision.learnedBefore) {
      throw new NotFound(`"${tool}" has no applied revision to undo.`, { context: { tool, partition } });
    }
    const card = await this.requireCard(partition, tool);
    const left = await this.versionLeftBy(partition, revision);
    if (card.version !== left) {
      throw new RevisionConflict(
        `The card of "${tool}" was changed after revision ${revision.id} was applied (version ${left} → ${card.version}); undo would lose that change.`,
        { context: { tool, id: revision.id } },
      );
    }
    const undone: Revision = { ...revision, status: "undone", closedBy: options.approvedBy, updatedAt: Date.now() };
    const [saved] = await this.ledger.commit(partition, {
      cards: [{ ...card, learned: revision.learnedBefore }],
      revisions: [undone],
      expectVersion: card.version,
    });
    await this.index.upsertCards(partition, [saved]);
    return undone;
  }

  // ---------------------------------------------------------------- internals

  private async window(partition: string, override: SettingsInput | undefined): Promise<Window> {
    const settings = parseSettings(override ?? {}, await this.ledger.getSettings(partition));
    const [cards, calls, turns] = await Promise.all([
      this.ledger.listCards(partition),
      this.ledger.listCalls(partition),
      this.ledger.listTurns(partition),
    ]);
    return { settings, cards, calls, turns };
  }

  /**
   * The card version a revision's apply left, carried past later revisions of the tool that were
   * applied and undone since: each left the card as it found it, two versions on. So a second
   * undo takes back the revision before the one undone.
   */
  private async versionLeftBy(partition: string, revision: Revision): Promise<number | undefined> {
    const undone = (await this.ledger.listRevisions(partition, { tool: revision.tool, status: "undone" })).sort(
      (a, b) => a.cardVersionBefore - b.cardVersionBefore,
    );
    let version = revision.cardVersionAfter;
    for (const later of undone) {
      if (later.cardVersionAfter !== undefined && later.cardVersionBefore === version)
        version = later.cardVersionAfter + 1;
    }
    return version;
  }

  private async requireCard(partition: string, tool: string): Promise<ToolCard> {
    const card = await this.ledger.getCard(partition, tool);
    if (!card)
      throw new NotFound(`No tool "${tool}" is registered in partition "${partition}".`, { context: { tool } });
    return card;
  }

  /**
   * The tool's missed requests that routing still misses today (an earlier revision may have
   * fixed some), with the routed requests it served that routing offered it for then but would not
   * today (`no_longer_offered`: a card changed since), oldest first, each marked with whether
   * routing would choose its wording as an example (see {@link WhatIf.chooseExamples}): scored on
   * the requests this tool served and on those other tools served that share a word with a
   * candidate. A wording that alone would push another
   * tool out of routing for a request that tool served is never a candidate: apply would
   * withdraw it.
   */
  private async coverMisses(
    whatIf: WhatIf,
    card: ToolCard,
    td: ToolDetection,
    served: {
      all: readonly TurnRecord[];
      own: readonly TurnRecord[];
      /** Requests routed with a choice (not every tool sent) before the partition's last card change. */
      routedBefore: ReadonlySet<string>;
      /** Each request's place in the partition's turns. */
      position: ReadonlyMap<string, number>;
    },
    settings: Settings,
    turnedDown: TurnedDown,
  ): Promise<CoveredMissRecord[]> {
    const recorded = td.misses.slice(-MAX_MISSES);
    // A routed request the tool served and did not miss was offered it then.
    const known = new Set(td.misses.map((m) => m.requestId));
    const moved: MissedRequest[] = served.own
      .slice(-MAX_OWN_REQUESTS)
      .filter((t) => served.routedBefore.has(t.requestId) && !known.has(t.requestId))
      .map((t) => ({
        tool: card.name,
        requestId: t.requestId,
        request: t.request,
        how: "no_longer_offered",
        threadId: t.threadId,
      }));
    const at = (m: MissedRequest): number => served.position.get(m.requestId) ?? -1;
    const current = await whatIf.cardVectors(card.name);
    const open: { miss: MissedRequest; probe: Probe }[] = [];
    for (const miss of [...recorded, ...moved].sort((a, b) => at(a) - at(b))) {
      const probe = await whatIf.probe(miss.request, card.name);
      if (rankOf(ToolIndex.bestScore(probe.vector, current), probe) !== null) continue;
      open.push({ miss, probe });
    }
    const tokens = new Map(open.map(({ miss }) => [miss.requestId, whatIf.words(miss.request)]));
    const candidates: MissedRequest[] = [];
    const seen = new Set<string>();
    for (let i = open.length - 1; i >= 0 && candidates.length < MAX_CANDIDATES; i--) {
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
      if (await whatIf.displaces(card.name, miss.request, await whatIf.variant(card, [miss.request]), served.all))
        continue;
      candidates.push(miss);
    }
    const learnedCount = card.learned.examples.filter((e) => e.source === "learned").length;
    const limit = Math.min(settings.maxNewQueries, settings.maxQueries - learnedCount);
    if (candidates.length === 0 || limit <= 0) return open.map(({ miss, probe }) => ({ miss, probe, pick: null }));
    const words = new Set(candidates.flatMap((c) => [...tokens.get(c.requestId)!]));
    const ownServed = served.own.slice(-MAX_OWN_REQUESTS);
    const ownIds = new Set(ownServed.map((t) => t.requestId));
    const others: ServedRequest[] = [];
    for (let i = served.all.length - 1; i >= 0 && others.length < MAX_OTHER_REQUESTS; i--) {
      const t = served.all[i];
      if (t.servedBy === card.name || !intersects(words, whatIf.words(t.request))) continue;
      others.push({ requestId: t.requestId, request: t.request, servedBy: t.servedBy! });
    }
    const chosen = await whatIf.chooseExamples(
      card.name,
      candidates,
      { own: [...ownServed, ...open.map((o) => o.miss).filter((m) => !ownIds.has(m.requestId))], others },
      limit,
      this.objective,
    );
    const picks = new Map(chosen.map((c, i) => [c.requestId, { pick: i + 1, gain: c.gain }]));
    return open.map(({ miss, probe }) => ({
      miss,
      probe,
      pick: picks.get(miss.requestId)?.pick ?? null,
      gain: picks.get(miss.requestId)?.gain,
    }));
  }

  private async ranks(
    whatIf: WhatIf,
    card: ToolCard,
    misses: readonly CoveredMissRecord[],
    added: string[],
    displaced: string[],
  ): Promise<Revision["ranks"]> {
    if (misses.length === 0 || added.length === 0) return [];
    const before = await whatIf.cardVectors(card.name);
    const after = await whatIf.variant(card, added, displaced);
    return misses.map(({ miss, probe }) => ({
      request: miss.request,
      before: rankOf(ToolIndex.bestScore(probe.vector, before), probe),
      after: rankOf(ToolIndex.bestScore(probe.vector, after), probe),
    }));
  }

  /**
   * For each new example, the first request served by another tool that it alone would push
   * that tool out of the offered set for (see {@link WhatIf.displaces}), against the index now.
   */
  private async displacements(
    partition: string,
    card: ToolCard,
    added: readonly string[],
    settings: Settings,
    known?: readonly TurnRecord[],
  ): Promise<Displacement[]> {
    if (added.length === 0) return [];
    const [cards, turns] = await Promise.all([
      this.ledger.listCards(partition),
      known ?? this.ledger.listTurns(partition),
    ]);
    const whatIf = new WhatIf(this.index, partition, settings.routingK, new Map(cards.map((c) => [c.name, c])));
    const served = turns.filter((t) => t.servedBy !== undefined);
    const out: Displacement[] = [];
    for (const query of added) {
      const hit = await whatIf.displaces(card.name, query, await whatIf.variant(card, [query]), served);
      if (hit) out.push(hit);
    }
    return out;
  }
}

/** Missed requests read per tool and review (the newest): ample evidence for 4 new examples. */
const MAX_MISSES = 50;

/** Distinct missed wordings tried as examples per tool and review (the newest). */
const MAX_CANDIDATES = 24;

/** Requests this tool served that choosing its examples is scored on (the newest). */
const MAX_OWN_REQUESTS = 100;

/** Requests other tools served that choosing one tool's examples is scored on (the newest sharing a word). */
const MAX_OTHER_REQUESTS = 300;

interface CoveredMissRecord {
  miss: MissedRequest;
  probe: Probe;
  /** Order in which routing chose this wording as an example; null when it did not. */
  pick: number | null;
  gain?: number;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

function failedCount(td: ToolDetection): number {
  return td.failures.reduce((n, f) => n + f.callIds.length, 0);
}

/**
 * Which synthetic examples give way when only `added` of a revision's examples are applied:
 * those equivalent to an added one, then as many of the rest as the cap needs.
 */
function yielding(
  learned: Learned,
  added: readonly string[],
  proposed: readonly string[],
  maxQueries: number,
): string[] {
  const byEquivalence = proposed.filter((s) => added.some((a) => equivalent(a, s)));
  const rest = proposed.filter((s) => !byEquivalence.includes(s));
  const over = learned.examples.length - byEquivalence.length + added.length - maxQueries;
  return [...byEquivalence, ...rest.slice(0, Math.max(0, over))];
}

/** The evidence the kept items rest on: cited failures, misses and confusions only. */
function citedEvidence(td: ToolDetection, kept: Proposal): Evidence[] {
  const calls = new Set(kept.notes.flatMap((n) => n.cites));
  const missed = new Set(kept.examples.flatMap((e) => e.cites));
  const confused = new Set(kept.notFor.flatMap((n) => n.cites));
  const out: Evidence[] = [];
  for (const f of td.failures) {
    const cited = f.callIds.filter((id) => calls.has(id));
    if (cited.length > 0) {
      out.push({
        kind: "failed_call",
        callIds: cited,
        errorClass: f.errorClass,
        errorMessage: f.errorMessage,
        argNames: f.argNames,
      });
    }
  }
  for (const m of td.misses) {
    if (missed.has(m.requestId))
      out.push({ kind: "missed_request", requestId: m.requestId, request: m.request, how: m.how });
  }
  for (const c of td.confusions) {
    if (confused.has(c.requestId)) {
      out.push({
        kind: "confused_request",
        requestId: c.requestId,
        request: c.request,
        servedBy: c.servedBy,
        how: c.how,
      });
    }
  }
  return out;
}
