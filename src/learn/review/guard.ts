/**
 * The guard on the whole: before new wordings change a partition's routing, the review replays a
 * held-out, time-ordered slice of the partition's served traffic, routed by the index as it is and
 * as it would be, and keeps only what does not lower top-1 on that slice and drops no tool by more
 * than {@link GuardOptions.maxToolLoss} requests (at rank 1 or in the first `routingK`, net). A
 * per-tool check alone misses damage spread over many tools with one request each; this one
 * counts the slice as a whole.
 *
 * - The slice: each tool's newest served turns among those that arrived since the last guard ran
 *   (a quarter of its turns, at least one), so traffic sorted by tool or arriving in bursts is
 *   tested for every tool, not only for the last few. The learned part stops before them: what is
 *   tested is never what was learned from. A turn held out once is let in by the next review (it
 *   was tested as the held-out slice then, and other tools' new turns test it now), so a tool whose
 *   traffic stopped, or that has one request, still learns.
 * - What is kept is stored as the partition's wordings gate (`ledger.wordingsGate`): per tool, the
 *   newest turn routing may take wordings from, by turn record id (ids sort by time; request ids
 *   do not). Every index reads its wordings through it.
 * - When the whole fails, the tools whose new wordings pulled the lost requests are held back
 *   (round after round); a tool whose wordings take a request its near-duplicate served (another
 *   version of the same function, `near-duplicates.ts`) is held back whatever the totals say. What
 *   is held back, and why, is on the verdict the review returns and the gate row keeps.
 *
 * The decisions ({@link heldOutSlice}, {@link judgeSlice}) are pure; {@link guardWordings} runs
 * them against the index.
 */
import { z } from "zod";
import type { Ledger } from "../../ledger/ledger.js";
import type { CallRecord, Revision, ToolCard, TurnRecord } from "../../ledger/schema.js";
import type { ToolIndex } from "../../routing/tool-index.js";
import { definedOnly, oneLine, spreadOrder } from "../../internal.js";
import { idFloorAt } from "../../ledger/keys.js";
import { withExamples } from "../card-examples.js";
import { nearDuplicatesOf } from "../near-duplicates.js";

/** Options of the guard (the review's `guard`). */
export interface GuardOptions {
  /**
   * Share of each tool's served turns held out, its newest (at least one turn a tool).
   * @default 0.25
   */
  share?: number;
  /**
   * Most held-out requests replayed per trial (taken newest first, round-robin over the tools).
   * @default 400
   */
  maxSlice?: number;
  /**
   * Most requests any one tool may lose on the slice, net (at rank 1, and in the first `routingK`).
   * @default 2
   */
  maxToolLoss?: number;
  /**
   * Trials after the first, each holding back the tools that pulled the requests the last lost.
   * @default 3
   */
  rounds?: number;
}

/** The defaults of {@link GuardOptions}. */
export const DEFAULT_GUARD: Readonly<Required<GuardOptions>> = Object.freeze({
  share: 0.25,
  maxSlice: 400,
  maxToolLoss: 2,
  rounds: 3,
});

/** A held-out request: the tool that served it and its (stored, masked) text. */
export interface SliceRequest {
  /** The turn record's id. */
  id: string;
  requestId: string;
  owner: string;
  request: string;
}

/** A tool with no served request in the window, probed by its own description. */
export interface CardProbe {
  owner: string;
  request: string;
}

/** What {@link heldOutSlice} chose. */
export interface HeldOut {
  /** The requests replayed, newest first round-robin over the tools. */
  slice: SliceRequest[];
  /** The gate a change would set: per tool, its newest turn before its held-out ones. */
  candidate: Map<string, string>;
}

/** One held-out request routed before and after: the tools offered, best first. */
export interface SliceRoute {
  owner: string;
  /** A {@link CardProbe}: counted apart from the served requests' top-1. */
  probe?: boolean;
  before: readonly string[];
  after: readonly string[];
}

/** A tool's requests on the slice that left (and entered) rank 1 and the first `k`. */
export interface ToolLoss {
  tool: string;
  n: number;
  /** Net requests lost at rank 1 (lost minus gained). */
  top1: number;
  /** Net requests lost from the first `k`. */
  firstK: number;
}

/** A tool whose new wordings were held back, and why. */
export interface HeldTool {
  tool: string;
  /** `pulled`: its wordings took other tools' held-out requests; `near_duplicate`: a request of its other version. */
  reason: "pulled" | "near_duplicate";
  /** The held-out requests it took (net of none: each counted once). */
  requests: number;
  /** For `near_duplicate`: the version whose request it took. */
  from?: string;
}

/** What the guard decided for one review. */
export interface GuardVerdict {
  /** Held-out requests replayed. */
  slice: number;
  /** Top-1 on the slice with the wordings routing had (`before`) and with those kept (`after`). */
  top1: { before: number; after: number };
  /** Top-1 on the slice with every new wording (the first trial). */
  tried: number;
  /** Tools whose new wordings were let in. */
  kept: string[];
  /** Tools whose new wordings were held back. */
  held: HeldTool[];
  /** The worst tool of the change kept (none when no tool lost). */
  worst?: ToolLoss;
  /** Set when nothing new was let in: why, for the operator. */
  refused?: string;
  /** Trials run (0 when nothing was new). */
  trials: number;
  /** Tools whose proposed examples the same guard held back, and why (absent when none). */
  examples?: HeldExamples[];
}

const ToolLossSchema = z.object({ tool: z.string(), n: z.number(), top1: z.number(), firstK: z.number() });

/** A {@link GuardVerdict} as the gate row stores it (read back with {@link storedVerdict}). */
export const GuardVerdictSchema = z.object({
  slice: z.number(),
  top1: z.object({ before: z.number(), after: z.number() }),
  tried: z.number(),
  kept: z.array(z.string()),
  held: z.array(
    z.object({
      tool: z.string(),
      reason: z.enum(["pulled", "near_duplicate"]),
      requests: z.number(),
      from: z.string().optional(),
    }),
  ),
  worst: ToolLossSchema.optional(),
  refused: z.string().optional(),
  trials: z.number(),
  examples: z.array(z.object({ tool: z.string(), reason: z.string() })).optional(),
});

/** The last verdict a partition's gate row keeps, or undefined when it has none (or one that does not parse). */
export function storedVerdict(gate: { verdict?: unknown } | null): GuardVerdict | undefined {
  const parsed = GuardVerdictSchema.safeParse(gate?.verdict);
  return parsed.success ? parsed.data : undefined;
}

/** What {@link judgeSlice} found on one trial. */
export interface Judgement {
  top1Before: number;
  top1After: number;
  /** Held-out requests of the tools the trial gives no wordings (`cold`), and how many of them are at rank 1 before and after. */
  cold: { n: number; before: number; after: number };
  /** The card probes of the tools with no traffic, and how many rank their tool first before and after. */
  probes: { n: number; before: number; after: number };
  /** Tools that lost, worst first. */
  losses: ToolLoss[];
  /** Per tool, the held-out requests of other tools it took (at rank 1, or into the first `k`). */
  pullers: Map<string, number>;
  /** Tools that took a request their near-duplicate served, with that version. */
  duplicatePulls: Map<string, string>;
  /** Why the trial fails, or undefined when it passes. */
  failure?: string;
}

/**
 * The held-out slice and the candidate gate. For each registered tool with served turns in the
 * window (by turn id, oldest first): the turns after its gate's id (all, with no gate) are new;
 * of those that arrived since the last guard ran (ids from `arrivedFrom`; all, without it), the
 * newest `max(1, round(share × turns))` are held out, and the candidate lets in every new one
 * before them: a tool with nothing arrived lets in what the last guard held out.
 */
export function heldOutSlice(
  turns: readonly Pick<TurnRecord, "id" | "requestId" | "request" | "servedBy">[],
  tools: readonly string[],
  gate: ReadonlyMap<string, string>,
  options: Pick<Required<GuardOptions>, "share" | "maxSlice">,
  arrivedFrom = "",
): HeldOut {
  const known = new Set(tools);
  const byTool = new Map<string, { id: string; requestId: string; request: string }[]>();
  for (const t of turns) {
    if (t.servedBy === undefined || !known.has(t.servedBy) || t.request.trim() === "") continue;
    let list = byTool.get(t.servedBy);
    if (!list) byTool.set(t.servedBy, (list = []));
    list.push({ id: t.id, requestId: t.requestId, request: t.request });
  }
  const candidate = new Map(gate);
  const perTool: SliceRequest[][] = [];
  for (const [tool, list] of [...byTool].sort((a, b) => a[0].localeCompare(b[0]))) {
    list.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const through = gate.get(tool) ?? "";
    const fresh = list.filter((t) => t.id > through);
    const arrived = fresh.filter((t) => t.id >= arrivedFrom).length;
    const hold = arrived === 0 ? 0 : Math.min(arrived, Math.max(1, Math.round(options.share * list.length)));
    const learn = fresh.length - hold;
    if (learn > 0) candidate.set(tool, fresh[learn - 1].id);
    perTool.push(
      fresh
        .slice(learn)
        .reverse()
        .map((t) => ({ ...t, owner: tool })),
    );
  }
  const slice: SliceRequest[] = [];
  for (let i = 0; slice.length < options.maxSlice; i++) {
    let any = false;
    for (const list of perTool) {
      if (i >= list.length) continue;
      any = true;
      slice.push(list[i]);
      if (slice.length >= options.maxSlice) break;
    }
    if (!any) break;
  }
  return { slice, candidate };
}

/** Most characters of a description a card probe routes (its first sentence, clipped). */
const PROBE_CHARS = 240;

/**
 * A probe per registered tool with no served turn in the window (at most `max`, spread over them
 * by name): its author's description, first sentence. The held-out slice holds no request of
 * such a tool, yet it is what popular tools' wordings take requests from: its own words must still
 * route to it as well as before.
 */
export function cardProbes(
  cards: readonly Pick<ToolCard, "name" | "author">[],
  served: ReadonlySet<string>,
  max: number,
): CardProbe[] {
  const cold = cards.filter((c) => !served.has(c.name)).sort((a, b) => a.name.localeCompare(b.name));
  const out: CardProbe[] = [];
  for (const i of spreadOrder(cold.length)) {
    if (out.length >= max) break;
    const text = oneLine(cold[i].author.description);
    const first = (text.match(/^.*?[.!?](\s|$)/)?.[0] ?? text).trim().slice(0, PROBE_CHARS);
    if (first !== "") out.push({ owner: cold[i].name, request: first });
  }
  return out;
}

/**
 * Judge one trial: top-1 over the slice before and after, each tool's net loss at rank 1 and in
 * the first `k`, and who pulled the lost requests (the tool now first where the owner lost rank 1;
 * the tools now offered that were not, where the owner left the first `k`). Only tools in
 * `changed` (whose wordings the trial changes) count as pullers. The trial fails when top-1 is
 * lower, when a tool loses more than `maxToolLoss`, or when a changed tool takes a request its
 * near-duplicate served (`duplicates`: per tool, its other versions).
 */
export function judgeSlice(
  routes: readonly SliceRoute[],
  k: number,
  maxToolLoss: number,
  changed: ReadonlySet<string>,
  duplicates: ReadonlyMap<string, ReadonlySet<string>> = new Map(),
  cold: ReadonlySet<string> = new Set(),
): Judgement {
  let before = 0;
  let after = 0;
  const coldCount = { n: 0, before: 0, after: 0 };
  const probes = { n: 0, before: 0, after: 0 };
  let served = 0;
  const by = new Map<string, ToolLoss>();
  const pullers = new Map<string, number>();
  const duplicatePulls = new Map<string, string>();
  const pull = (tool: string): void => {
    if (changed.has(tool)) pullers.set(tool, (pullers.get(tool) ?? 0) + 1);
  };
  for (const r of routes) {
    const was1 = r.before[0] === r.owner;
    const is1 = r.after[0] === r.owner;
    const wasK = r.before.slice(0, k).includes(r.owner);
    const isK = r.after.slice(0, k).includes(r.owner);
    if (r.probe) {
      probes.n += 1;
      probes.before += Number(was1);
      probes.after += Number(is1);
      if (was1 && !is1 && r.after[0] !== undefined) pull(r.after[0]);
      continue;
    }
    served += 1;
    before += Number(was1);
    after += Number(is1);
    if (cold.has(r.owner)) {
      coldCount.n += 1;
      coldCount.before += Number(was1);
      coldCount.after += Number(is1);
    }
    let loss = by.get(r.owner);
    if (!loss) by.set(r.owner, (loss = { tool: r.owner, n: 0, top1: 0, firstK: 0 }));
    loss.n += 1;
    loss.top1 += Number(was1) - Number(is1);
    loss.firstK += Number(wasK) - Number(isK);
    if (was1 && !is1 && r.after[0] !== undefined) {
      pull(r.after[0]);
      if (changed.has(r.after[0]) && duplicates.get(r.owner)?.has(r.after[0])) duplicatePulls.set(r.after[0], r.owner);
    }
    if (wasK && !isK) for (const tool of r.after.slice(0, k)) if (!r.before.slice(0, k).includes(tool)) pull(tool);
  }
  const n = Math.max(1, served);
  const losses = [...by.values()]
    .filter((l) => l.top1 > 0 || l.firstK > 0)
    .sort((a, b) => Math.max(b.top1, b.firstK) - Math.max(a.top1, a.firstK) || a.tool.localeCompare(b.tool));
  const judgement: Judgement = {
    top1Before: before / n,
    top1After: after / n,
    cold: coldCount,
    probes,
    losses,
    pullers,
    duplicatePulls,
  };
  const worst = losses[0];
  if (duplicatePulls.size > 0) {
    const [tool, from] = [...duplicatePulls][0];
    judgement.failure = `"${tool}" took held-out requests of its near-duplicate "${from}"`;
  } else if (after < before) {
    judgement.failure = `top-1 on the held-out slice would fall from ${before} to ${after} of ${served}`;
  } else if (probes.after < probes.before) {
    judgement.failure = `tools with no traffic would lose rank 1 for their own description: ${probes.before} to ${probes.after} of ${probes.n}`;
  } else if (coldCount.after < coldCount.before) {
    judgement.failure = `top-1 of the tools with no wordings of their own would fall from ${coldCount.before} to ${coldCount.after} of their ${coldCount.n} held-out requests`;
  } else if (worst && Math.max(worst.top1, worst.firstK) > maxToolLoss) {
    judgement.failure = `"${worst.tool}" would lose ${Math.max(worst.top1, worst.firstK)} of its ${worst.n} held-out requests (at most ${maxToolLoss})`;
  }
  return judgement;
}

/** What {@link guardWordings} needs of the review. */
export interface GuardInput {
  ledger: Ledger;
  index: ToolIndex;
  partition: string;
  /** The review's window (turns and calls, oldest first) and the registered tools' cards. */
  turns: readonly TurnRecord[];
  calls: readonly CallRecord[];
  cards: readonly ToolCard[];
  /** Tools routing offers (the partition's `routingK`). */
  k: number;
  /** @default DEFAULT_GUARD */
  options?: GuardOptions;
}

/**
 * Bring the partition's wordings forward through the guard (see the module doc): the index is set
 * to the stored gate's wordings and the slice routed; then to the candidate's, routed again and
 * judged, the pulling tools held back round after round. The gate kept is stored (with the
 * verdict) before the index's last change is announced, so every process follows the same one.
 */
export async function guardWordings(input: GuardInput): Promise<{ verdict: GuardVerdict; replayed: Replayed[] }> {
  const o = { ...DEFAULT_GUARD, ...definedOnly(input.options ?? {}) };
  const { ledger, index, partition, k } = input;
  const stored = await ledger.wordingsGate(partition);
  const gate = new Map(Object.entries(stored?.tools ?? {}));
  const tools = input.cards.map((c) => c.name);
  const arrivedFrom = stored?.at !== undefined ? idFloorAt(stored.at) : "";
  const { slice, candidate } = heldOutSlice(input.turns, tools, gate, o, arrivedFrom);
  const servedTools = new Set(input.turns.flatMap((t) => (t.servedBy === undefined ? [] : [t.servedBy])));
  const probes = cardProbes(input.cards, servedTools, o.maxSlice);
  const replayed: Replayed[] = [...slice, ...probes.map((p) => ({ ...p, probe: true }))];
  const records = (through: ReadonlyMap<string, string>) => ({ turns: input.turns, calls: input.calls, through });
  const changedFrom = (trial: ReadonlyMap<string, string>): Set<string> =>
    new Set([...trial].filter(([tool, id]) => gate.get(tool) !== id).map(([tool]) => tool));
  await index.refreshWordings(partition, records(gate));
  const verdict: GuardVerdict = {
    slice: slice.length,
    top1: { before: 0, after: 0 },
    tried: 0,
    kept: [],
    held: [],
    trials: 0,
  };
  let kept: Map<string, string> = gate;
  if (changedFrom(candidate).size > 0 && slice.length > 0) {
    const beforeRoutes = await routeSlice(index, partition, replayed, k);
    const duplicates = nearDuplicatesOf(tools);
    let trial = new Map(candidate);
    let passed = false;
    for (let round = 0; round <= o.rounds; round++) {
      const changed = changedFrom(trial);
      if (changed.size === 0) break;
      const revision = index.revision(partition);
      await index.refreshWordings(partition, records(trial));
      // Nothing routing reads changed (wordings off in this index): the slice routes as before.
      const afterRoutes =
        index.revision(partition) === revision ? beforeRoutes : await routeSlice(index, partition, replayed, k);
      const routes = replayed.map((s, i) => ({
        owner: s.owner,
        before: beforeRoutes[i],
        after: afterRoutes[i],
        ...(s.probe ? { probe: true } : {}),
      }));
      const cold = new Set(slice.map((s) => s.owner).filter((tool) => !trial.has(tool)));
      const judged = judgeSlice(routes, k, o.maxToolLoss, changed, duplicates, cold);
      verdict.trials += 1;
      if (round === 0) {
        verdict.top1.before = judged.top1Before;
        verdict.tried = judged.top1After;
      }
      if (!judged.failure) {
        passed = true;
        verdict.top1.after = judged.top1After;
        if (judged.losses[0]) verdict.worst = judged.losses[0];
        break;
      }
      verdict.refused = judged.failure;
      // Hold back who pulled: a near-duplicate's taker always; else every tool that took a lost request.
      const back = judged.duplicatePulls.size > 0 ? [...judged.duplicatePulls.keys()] : [...judged.pullers.keys()];
      if (back.length === 0) break;
      for (const tool of back) {
        const from = judged.duplicatePulls.get(tool);
        verdict.held.push({
          tool,
          reason: from !== undefined ? "near_duplicate" : "pulled",
          requests: judged.pullers.get(tool) ?? 0,
          ...(from !== undefined ? { from } : {}),
        });
        const was = gate.get(tool);
        if (was === undefined) trial.delete(tool);
        else trial.set(tool, was);
      }
    }
    if (passed) {
      kept = trial;
      delete verdict.refused;
    } else {
      verdict.top1.after = verdict.top1.before;
      verdict.held = [...new Map(verdict.held.map((h) => [h.tool, h])).values()];
    }
  } else if (slice.length === 0) {
    verdict.refused = "no served request to hold out yet";
  }
  verdict.kept = [...changedFrom(kept)].sort();
  await ledger.setWordingsGate(partition, {
    tools: Object.fromEntries(kept),
    order: "turn-id",
    verdict,
    at: Date.now(),
  });
  await index.refreshWordings(partition, records(kept));
  // The trials may have been announced before the gate was stored: announce what was kept.
  if (verdict.trials > 0) await ledger.announce({ partition, kind: "wordings" });
  return { verdict, replayed };
}

/** A request the guard replays: a held-out served request, or a card probe. */
export interface Replayed {
  owner: string;
  request: string;
  probe?: boolean;
}

/** A tool whose new examples the guard held back, and why. */
export interface HeldExamples {
  tool: string;
  reason: string;
}

/**
 * The same guard for the examples a review proposes (`revisions`, one per tool), on the same
 * replayed requests, with the wordings as the guard left them: the cards with their new examples
 * are put in the index (not in the ledger), the requests routed again and judged, the examples of
 * the tools that pulled the lost ones held back round after round; the index is then put back.
 * A replayed request that is one of the new examples is not judged (it was learned from).
 * Returns the tools whose examples are held back, each with the reason.
 */
export async function guardExamples(
  input: Omit<GuardInput, "turns" | "calls"> & {
    revisions: readonly Pick<Revision, "tool" | "queriesAdded">[];
    replayed: readonly Replayed[];
  },
): Promise<HeldExamples[]> {
  const o = { ...DEFAULT_GUARD, ...definedOnly(input.options ?? {}) };
  const { index, partition, k } = input;
  const cards = new Map(input.cards.map((c) => [c.name, c]));
  const adding = input.revisions.filter((r) => r.queriesAdded.length > 0 && cards.has(r.tool));
  if (adding.length === 0 || input.replayed.length === 0) return [];
  const learned = new Set(adding.flatMap((r) => r.queriesAdded.map((t) => oneLine(t).toLowerCase())));
  const judged = input.replayed.filter((r) => !learned.has(oneLine(r.request).toLowerCase()));
  const before = await routeSlice(index, partition, judged, k);
  const duplicates = nearDuplicatesOf(input.cards.map((c) => c.name));
  const trying = new Set(adding.map((r) => r.tool));
  const held: HeldExamples[] = [];
  for (let round = 0; round <= o.rounds && trying.size > 0; round++) {
    const trial = adding.filter((r) => trying.has(r.tool)).map((r) => withExamples(cards.get(r.tool)!, r.queriesAdded));
    const originals = trial.map((c) => cards.get(c.name)!);
    let after: string[][] | undefined;
    try {
      await index.upsertCards(partition, trial, { trial: true });
      // Checked: an index that rebuilt meanwhile (from the ledger's cards) holds no trial to route.
      if (trial.every((c) => index.holdsCard(partition, c))) after = await routeSlice(index, partition, judged, k);
    } finally {
      await index.upsertCards(partition, originals, { trial: true });
    }
    if (!after) {
      for (const tool of trying) held.push({ tool, reason: "the index could not hold the trial cards to route them" });
      break;
    }
    const routes = judged.map((r, i) => ({ owner: r.owner, before: before[i], after: after[i], probe: r.probe }));
    const judgement = judgeSlice(routes, k, o.maxToolLoss, trying, duplicates);
    if (!judgement.failure) break;
    const back =
      judgement.duplicatePulls.size > 0 ? [...judgement.duplicatePulls.keys()] : [...judgement.pullers.keys()];
    const blamed = back.length > 0 ? back : [...trying];
    for (const tool of blamed) {
      held.push({ tool, reason: judgement.failure });
      trying.delete(tool);
    }
  }
  return held;
}

/** Each held-out request's offered tools, best first. */
async function routeSlice(
  index: ToolIndex,
  partition: string,
  slice: readonly Pick<SliceRequest, "request">[],
  k: number,
): Promise<string[][]> {
  const out: string[][] = [];
  for (const s of slice) out.push((await index.route(partition, s.request, { k })).map((o) => o.tool));
  return out;
}
