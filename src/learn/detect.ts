/**
 * Detection: what the ledger says went wrong with each tool, found by code alone.
 *
 * A pure function over plain arrays of call, turn and route records. It reads nothing else and
 * writes nothing; the review builds proposals and revisions on what it returns. Every rule is
 * stated on the function that applies it, and the whole pass is linear in the number of records
 * (maps keyed by tool, request and thread; the only sort is of each thread's turns by id).
 */
import { findAimedAtModel } from "../text/injection.js";
import { quotedShape } from "../text/free-text.js";
import { allowedWords, type AllowedWords } from "../text/vocabulary.js";
import { DEFAULT_SETTINGS, type Settings } from "../settings.js";
import type {
  ArgShape,
  CallRecord,
  ErrorClass,
  Evidence,
  Offer,
  RouteRecord,
  ToolCard,
  TurnRecord,
} from "../ledger/schema.js";
import { sortById } from "../internal.js";

/**
 * How a request missed a tool: served though routing did not offer it (`served_unoffered`), asked
 * again in the thread and then served (`re_asked`), or, found by the review against the index as
 * it is now, served when routing offered it but no longer offered today (`no_longer_offered`).
 */
export type MissKind = Extract<Evidence, { kind: "missed_request" }>["how"];

/** How a request went to the wrong tool (the kinds a revision's evidence stores). */
export type ConfusionKind = Extract<Evidence, { kind: "confused_request" }>["how"];

/** The masked shapes one argument took over a set of calls. Names and shapes, never values. */
export interface ArgShapeSummary {
  /** Argument name. */
  name: string;
  /** Calls of the set that passed this argument. */
  calls: number;
  /** The distinct JSON kinds it was passed as. */
  kinds: ArgShape["kind"][];
  /** The distinct masked shapes, most frequent first (ties: first seen first). */
  shapes: { shape: string; count: number }[];
}

/** Failed calls of one tool with the same error class and the same masked message. */
export interface FailureGroup {
  tool: string;
  errorClass: ErrorClass;
  /** The masked error message ("" when the error had none). */
  errorMessage: string;
  /** Ids of the failed calls, oldest first. */
  callIds: string[];
  /**
   * The thread of each call in `callIds` (its own id when it has none): what the vocabulary rule
   * counts as distinct, so one conversation repeating a word (a name in an error) counts once.
   * @default each call its own
   */
  callGroups?: string[];
  /** Argument names the failed calls passed, in first-seen order. */
  argNames: string[];
  /** The masked shapes the failed calls passed, per argument. */
  shapes: ArgShapeSummary[];
}

/** A request that should have reached a tool and did not (see {@link detect}). */
export interface MissedRequest {
  /** The tool that was missed. */
  tool: string;
  requestId: string;
  /** The request as stored (masked). For `re_asked`, the first wording: the one that missed. */
  request: string;
  how: MissKind;
  threadId?: string;
  /** For `re_asked`: the next request of the thread, the one the tool served. */
  nextRequestId?: string;
}

/** A request that went to a tool although another tool served it in the end (see {@link detect}). */
export interface ConfusedRequest {
  /** The tool the request went to wrongly. */
  tool: string;
  requestId: string;
  /** The request as stored (masked). */
  request: string;
  /** The tool that served it in the end (for `re_asked`: the one that served the next request). */
  servedBy: string;
  how: ConfusionKind;
  threadId?: string;
  /** For `re_asked`: the next request of the thread, the one `servedBy` served. */
  nextRequestId?: string;
}

/** Everything detection found for one registered tool. */
export interface ToolDetection {
  tool: string;
  /** Call records of the tool that were read (at most `settings.maxCallsPerTool`, the newest). */
  calls: number;
  /** Failed calls grouped by error class and masked message, largest group first. */
  failures: FailureGroup[];
  /**
   * Failed calls whose error says the arguments were refused (`validation`, `not_found`,
   * `unknown`), as opposed to the tool being down, slow, rate limited or forbidden. The example
   * call is built only for a tool with at least `minFailures` of these.
   */
  refusedCount: number;
  /** Requests that missed the tool, oldest first, one per request. */
  misses: MissedRequest[];
  /** Requests that went to the tool and belonged to another, oldest first, one per request. */
  confusions: ConfusedRequest[];
  /** Successful call records, oldest first: what the example call is built from. */
  successes: CallRecord[];
  /** Newest call record id read for the tool (for `reviewedThrough`). */
  lastCallId?: string;
}

/** What {@link detect} returns: one entry per registered tool, in registration order. */
export interface Detection {
  tools: Map<string, ToolDetection>;
}

/** Input of {@link detect}. */
export interface DetectInput {
  /** Turn records (what each run did for a request), in any order. */
  turns: readonly TurnRecord[];
  /** Route records (what routing offered for a request), in any order. */
  routes: readonly RouteRecord[];
  /** Call records, in any order. */
  calls: readonly CallRecord[];
  /** Registered tool names. Records about other tools are ignored. */
  tools: readonly string[];
  /**
   * The registered cards: the words of a tool's card (its author's description, its argument
   * names) may be quoted from its error text; any other word outside the vocabulary is `<word>`.
   * @default [] (the vocabulary, the tools' names and the calls' argument names only)
   */
  cards?: readonly Pick<ToolCard, "name" | "author">[];
  /**
   * Settings; only `maxCallsPerTool` is read here (thresholds are applied by the proposer and the vet).
   * @default DEFAULT_SETTINGS
   */
  settings?: Pick<Settings, "maxCallsPerTool">;
}

/** Error classes that say the tool refused the arguments (as opposed to being unavailable). */
export const REFUSED_ERROR_CLASSES: ReadonlySet<ErrorClass> = new Set<ErrorClass>([
  "validation",
  "not_found",
  "unknown",
]);

/**
 * Find, for every registered tool, its repeated calling errors, the requests that missed it and
 * the requests that went to it wrongly.
 *
 * Rules (after seed 000, "Revising an entry from the tool log"):
 *
 * - **Which tool a request counts for**: the tool that served it, `turn.servedBy` (the last tool
 *   its run called successfully, or the outcome the application reported). A lookup made on the
 *   way is preparation and does not count. A request with no `servedBy` counts for no tool.
 *   When several turn records carry the same request id, the one with the greatest id is used.
 * - **Failures**: the failed call records of the tool (newest `maxCallsPerTool` calls read),
 *   grouped by error class (`unknown` when absent) and masked message, with their call ids and
 *   the argument names they passed.
 * - **Missed, `served_unoffered`**: tool T served request R, routing ran for R with a choice
 *   (`allSent` false) and T was not among the tools it offered.
 * - **Missed, `re_asked`**: in one thread (turns ordered by id), the run of request R never
 *   called T, and the next request of the thread was served by T. R, the first wording, is the
 *   missed one. A run that called T and failed is a calling problem, not a miss.
 * - **Confused, `re_asked`**: in one thread, R was served by U, and the next request was served by
 *   T ≠ U: R went to U and belonged to T.
 * - **Confused, `ranked_first`**: routing ran for R with a choice, ranked U first, did not offer T,
 *   and T served R (T ≠ U).
 * - Each (tool, request) pair is reported once (the rules cannot both fire on one pair). Only
 *   registered tools get an entry; a confusion may name any tool that served (the vet refuses a
 *   line naming an unregistered one). Turns without a thread id take no part in `re_asked`.
 *
 * One pass over the turns in id order (sorted only when the input is not), with maps keyed by
 * request, thread and tool: linear in the number of records.
 */
export function detect(input: DetectInput): Detection {
  const maxCalls = input.settings?.maxCallsPerTool ?? DEFAULT_SETTINGS.maxCallsPerTool;
  const registered = new Set(input.tools);
  const out = new Map<string, ToolDetection>();
  // Per tool, the position (turn index) of each miss and confusion, for oldest-first order.
  const state = new Map<string, { td: ToolDetection; missAt: number[]; confusionAt: number[] }>();
  for (const tool of input.tools) {
    if (out.has(tool)) continue;
    const td: ToolDetection = {
      tool,
      calls: 0,
      failures: [],
      refusedCount: 0,
      misses: [],
      confusions: [],
      successes: [],
    };
    out.set(tool, td);
    state.set(tool, { td, missAt: [], confusionAt: [] });
  }

  // A tool's error text is quoted as its masked shape only: words of the common vocabulary and the
  // tools' names; a word released in the partition (shown by several callers) is still `<word>` here.
  const cards = new Map((input.cards ?? []).map((c) => [c.name, c] as const));
  const quoteWords = (tool: string, words: readonly string[]): AllowedWords => {
    const card = cards.get(tool);
    const own = card ? [card.author.description, ...card.author.argNames] : [];
    return allowedWords({ toolNames: input.tools, card: [...own, ...words] });
  };
  readCalls(input.calls, out, maxCalls, quoteWords);

  // One turn per request (the newest), and the route of each request (the newest).
  const turnByRequest = new Map<string, TurnRecord>();
  for (const turn of input.turns) {
    const prior = turnByRequest.get(turn.requestId);
    if (!prior || prior.id < turn.id) turnByRequest.set(turn.requestId, turn);
  }
  const routeByRequest = new Map<string, RouteRecord>();
  for (const route of input.routes) {
    const prior = routeByRequest.get(route.requestId);
    if (!prior || prior.id < route.id) routeByRequest.set(route.requestId, route);
  }
  const ordered = [...turnByRequest.values()];
  sortById(ordered);
  // A request that speaks to the model is data, never evidence for a lesson (checked once each).
  const speaking = new Map<string, boolean>();
  const speaks = (requestId: string): boolean => {
    let known = speaking.get(requestId);
    if (known === undefined) {
      const turn = turnByRequest.get(requestId);
      known = turn !== undefined && speaksToModel(turn);
      speaking.set(requestId, known);
    }
    return known;
  };

  // Each (tool, request) pair can arise from one rule only (the rules' conditions on who served
  // the request exclude each other, and each request has one turn and one next turn), so no
  // de-duplication is needed.
  const addMiss = (miss: MissedRequest, at: number): void => {
    const st = state.get(miss.tool);
    if (!st || speaks(miss.requestId)) return;
    st.td.misses.push(miss);
    st.missAt.push(at);
  };
  const addConfusion = (confusion: ConfusedRequest, at: number): void => {
    const st = state.get(confusion.tool);
    if (!st || speaks(confusion.requestId)) return;
    st.td.confusions.push(confusion);
    st.confusionAt.push(at);
  };

  // One pass in id order; `previous` holds the last turn seen in each thread.
  const previous = new Map<string, { turn: TurnRecord; at: number }>();
  for (let at = 0; at < ordered.length; at++) {
    const turn = ordered[at];
    const served = turn.servedBy;

    // Routed requests: served by a tool routing did not offer; ranked first but not the server.
    const route = served === undefined ? undefined : routeByRequest.get(turn.requestId);
    if (served !== undefined && route && !route.allSent) {
      let offered = false;
      let first: Offer | undefined;
      for (const offer of route.offered) {
        if (offer.tool === served) offered = true;
        if (!first || offer.rank < first.rank) first = offer;
      }
      if (!offered) {
        if (registered.has(served)) {
          addMiss(
            withThread<MissedRequest>(
              { tool: served, requestId: turn.requestId, request: turn.request, how: "served_unoffered" },
              turn,
            ),
            at,
          );
        }
        if (first && first.tool !== served && registered.has(first.tool)) {
          const confusion: ConfusedRequest = {
            tool: first.tool,
            requestId: turn.requestId,
            request: turn.request,
            servedBy: served,
            how: "ranked_first",
          };
          addConfusion(withThread(confusion, turn), at);
        }
      }
    }

    // Threads: the request before this one did not reach the tool that served this one.
    if (turn.threadId === undefined) continue;
    const key = `${turn.partition}\u0000${turn.threadId}`;
    const before = previous.get(key);
    previous.set(key, { turn, at });
    if (!before || served === undefined) continue;
    const current = before.turn;
    if (registered.has(served) && !current.calls.some((c) => c.tool === served)) {
      const miss: MissedRequest = {
        tool: served,
        requestId: current.requestId,
        request: current.request,
        how: "re_asked",
        nextRequestId: turn.requestId,
      };
      addMiss(withThread(miss, current), before.at);
    }
    const used = current.servedBy;
    if (used !== undefined && used !== served && registered.has(used)) {
      const confusion: ConfusedRequest = {
        tool: used,
        requestId: current.requestId,
        request: current.request,
        servedBy: served,
        how: "re_asked",
        nextRequestId: turn.requestId,
      };
      addConfusion(withThread(confusion, current), before.at);
    }
  }

  // Oldest first, whichever rule found them.
  for (const st of state.values()) {
    st.td.misses = byPosition(st.td.misses, st.missAt);
    st.td.confusions = byPosition(st.td.confusions, st.confusionAt);
  }
  return { tools: out };
}

function byPosition<T>(items: T[], at: number[]): T[] {
  let sorted = true;
  for (let i = 1; i < at.length && sorted; i++) if (at[i - 1] > at[i]) sorted = false;
  if (sorted) return items;
  return items
    .map((item, i) => ({ item, at: at[i] }))
    .sort((x, y) => x.at - y.at)
    .map((x) => x.item);
}

/** The call-record part of {@link detect}: failures, refused count and successes per tool. */
function readCalls(
  calls: readonly CallRecord[],
  out: Map<string, ToolDetection>,
  maxCalls: number,
  quoteWordsOf: (tool: string, words: readonly string[]) => AllowedWords,
): void {
  const byTool = new Map<string, CallRecord[]>();
  for (const call of calls) {
    if (!out.has(call.tool)) continue;
    const list = byTool.get(call.tool);
    if (list) list.push(call);
    else byTool.set(call.tool, [call]);
  }
  for (const [tool, all] of byTool) {
    const td = out.get(tool);
    if (!td) continue;
    const sorted = sortById(all);
    const read = sorted.length > maxCalls ? sorted.slice(sorted.length - maxCalls) : sorted;
    td.calls = read.length;
    td.lastCallId = read.length > 0 ? read[read.length - 1].id : undefined;
    const groups = new Map<string, CallRecord[]>();
    let words: AllowedWords | undefined;
    // The calls' argument names and the letter parts of their masked shapes (`ORD` of `ORD-#####`) may be quoted.
    const quoteWords = (): AllowedWords =>
      (words ??= quoteWordsOf(tool, [...argNamesOf(read), ...read.flatMap((c) => c.args.map((a) => a.shape))]));
    for (const call of read) {
      if (call.outcome === "success") {
        td.successes.push(call);
        continue;
      }
      const errorClass = call.errorClass ?? "unknown";
      if (REFUSED_ERROR_CLASSES.has(errorClass)) td.refusedCount += 1;
      const key = `${errorClass}\u0000${messageOf(call, quoteWords())}`;
      const group = groups.get(key);
      if (group) group.push(call);
      else groups.set(key, [call]);
    }
    for (const group of groups.values()) {
      const head = group[0];
      td.failures.push({
        tool,
        errorClass: head.errorClass ?? "unknown",
        errorMessage: messageOf(head, quoteWords()),
        callIds: group.map((c) => c.id),
        callGroups: group.map((c) => c.threadId ?? c.id),
        argNames: argNamesOf(group),
        shapes: summarizeShapes(group),
      });
    }
    // Largest group first; stable for equal sizes (first failure first).
    td.failures.sort((a, b) => b.callIds.length - a.callIds.length);
  }
}

/**
 * Whether a request speaks to the model: flagged by the recorder on the text as the user wrote
 * it (`requestAimed`, before masking could hide an escaped payload), or found now in its stored
 * text (older rows). Such a request is never a missed or confused request, so no example, "Not
 * for" line or phrase is made of its words.
 */
export function speaksToModel(turn: Pick<TurnRecord, "request" | "requestAimed">): boolean {
  return turn.requestAimed !== undefined || findAimedAtModel(turn.request) !== undefined;
}

/**
 * A failed call's message as evidence, in its masked shape only (`quotedShape`): "" when it
 * speaks to the model (flagged by the recorder, or found now in an older row), so such text never
 * reaches a proposer or a lesson.
 */
function messageOf(call: CallRecord, quoteWords: AllowedWords): string {
  const message = call.errorMessage ?? "";
  if (message === "" || call.errorAimed !== undefined || findAimedAtModel(message) !== undefined) return "";
  return quotedShape(message, quoteWords);
}

/** Argument names passed by any of the calls, in first-seen order. */
export function argNamesOf(calls: readonly CallRecord[]): string[] {
  const names = new Set<string>();
  for (const call of calls) for (const arg of call.args) names.add(arg.name);
  return [...names];
}

/**
 * The masked shapes each argument took over a set of calls, arguments in first-seen order,
 * shapes most frequent first. Reads only names, kinds and masked shapes.
 */
export function summarizeShapes(calls: readonly CallRecord[]): ArgShapeSummary[] {
  const byName = new Map<string, { calls: number; kinds: Set<ArgShape["kind"]>; shapes: Map<string, number> }>();
  for (const call of calls) {
    for (const arg of call.args) {
      let entry = byName.get(arg.name);
      if (!entry) {
        entry = { calls: 0, kinds: new Set(), shapes: new Map() };
        byName.set(arg.name, entry);
      }
      entry.calls += 1;
      entry.kinds.add(arg.kind);
      entry.shapes.set(arg.shape, (entry.shapes.get(arg.shape) ?? 0) + 1);
    }
  }
  return [...byName].map(([name, e]) => ({
    name,
    calls: e.calls,
    kinds: [...e.kinds],
    shapes: [...e.shapes].map(([shape, count]) => ({ shape, count })).sort((a, b) => b.count - a.count),
  }));
}

/**
 * The evidence a revision of this tool rests on, in the ledger's `Evidence` form: one
 * `failed_call` per failure group, one `missed_request` per miss, one `confused_request` per
 * confusion. Argument names and masked text only.
 */
export function evidenceOf(td: ToolDetection): Evidence[] {
  const out: Evidence[] = [];
  for (const f of td.failures) {
    out.push({
      kind: "failed_call",
      callIds: [...f.callIds],
      errorClass: f.errorClass,
      errorMessage: f.errorMessage,
      argNames: [...f.argNames],
    });
  }
  for (const m of td.misses) {
    out.push({ kind: "missed_request", requestId: m.requestId, request: m.request, how: m.how });
  }
  for (const c of td.confusions) {
    out.push({
      kind: "confused_request",
      requestId: c.requestId,
      request: c.request,
      servedBy: c.servedBy,
      how: c.how,
    });
  }
  return out;
}

function withThread<T extends { threadId?: string }>(item: T, turn: TurnRecord): T {
  if (turn.threadId !== undefined) item.threadId = turn.threadId;
  return item;
}
