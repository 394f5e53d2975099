/**
 * Wordings: what the traffic taught routing. Per partition and tool, the routing index keeps the
 * wordings of requests the tool served, each its own vector, and a tool's score is a calibrated
 * blend of its card's score and its best {@link WordingsOptions.best} wording similarities (see
 * `wording-calibration.ts`). Which wordings are kept is decided here, purely, from turn records:
 * every wording passes the gate as a learned text does (masked, allow-listed, refused when aimed
 * at the model or holding a value), duplicates are one, and at most {@link WordingsOptions.cap}
 * a tool are kept, spread over the window rather than only the newest.
 */
import { createHash } from "node:crypto";
import { InvalidInput } from "../errors.js";
import { badCount, definedOnly, oneLine, spreadOrder } from "../internal.js";
import type { Ledger } from "../ledger/ledger.js";
import type { CallRecord, ToolCard, TurnRecord } from "../ledger/schema.js";
import { valueCheckOf } from "../text/fingerprint.js";
import { gateText } from "../text/gate.js";
import { allowedWords, type CitedRequest } from "../text/vocabulary.js";
import { routingTexts } from "./routing-text.js";

/** Options of the wordings the routing index keeps (the index option `wordings`). */
export interface WordingsOptions {
  /**
   * Keep wordings of served requests and route with them (docs/routing.md has what they gain and
   * cost on MetaTool); `false` (or `enabled: false`) routes from the cards alone.
   * @default true
   */
  enabled?: boolean;
  /**
   * Most wordings kept per tool; past it a spread over the window is kept (the newest first).
   * @default 200
   */
  cap?: number;
  /**
   * How many of a tool's best-matching wordings add to its score.
   * @default 3
   */
  best?: number;
  /**
   * Served requests the re-check routes each time the wordings change (their own wordings, each
   * left out while it is routed): a wording that pushes a request's own tool out of the first
   * `routingK` its card gave it is held back (`wordings-guard.ts`). 0, the default, leaves the
   * re-check off: on MetaTool folds 1-2 it held back ~800 of ~11,400 wordings, cost a top-1 point
   * and left the worst tool's loss as it was (docs/routing.md), while routing every sampled
   * request twice on each change.
   * @default 0
   */
  check?: number;
  /**
   * The {@link CARD_BEST_KEPT} count: tools the cards alone rank first that stay offered whatever
   * the wordings say; 0, the default, lets the wordings re-rank freely (docs/learning.md).
   * @default 0
   */
  keep?: number;
  /**
   * Most weight a tool's wordings get against its card in its score (many wordings; fewer weigh
   * less), in [0, 1] (`wording-calibration.ts`).
   * @default 0.85
   */
  weight?: number;
  /**
   * Wordings that match a request better than the tool's card weigh `n / (n + lift)` of `weight`:
   * a few lift a tool fast (1 let one wording that happened to match lift a tool into the first
   * five on MetaTool's long-tail splits, docs/learning.md).
   * @default 3
   */
  lift?: number;
  /**
   * Wordings that match worse than the card weigh `n / (n + lower)` of `weight`: many are needed
   * to pull a tool down.
   * @default 20
   */
  lower?: number;
  /**
   * Added to the score of the first five tools of the cards alone. 0: on MetaTool's even folds any
   * bonus cost top-1 (0.02: 3.5 points without reviews), on the long-tail splits it gained none.
   * @default 0
   */
  sticky?: number;
  /**
   * A lift from few wordings counts only as far as their evidence stands out from the tool's
   * background: of the lift, the share `lift / (n + lift)` (for `n` wordings: 3 of 4 for one,
   * 1 of 11 for 30) counts none below this many background spreads above the background's mean,
   * all from 2 more (`liftShare` in `wording-calibration.ts`). One wording that happens to match
   * a request a little better than the card no longer pushes a tool without traffic out of the
   * first five; a few that match well still lift their tool. -Infinity: nothing held back (the
   * behaviour before 2 became the default; docs/learning.md has both).
   * @default 2
   */
  standOut?: number;
  /**
   * Wordings (a spread over the tools) routed as requests to take each tool's background from,
   * again whenever the wordings change.
   * @default 300
   */
  sample?: number;
  /**
   * Weight of the classifier over the wordings (`wording-classifier.ts`): a tool it ranks below
   * its first choice for a request is pulled down by up to this many spreads of the request's
   * scores (times its share, see `classifierHalf`); it never lifts a tool, and never moves a tool
   * without wordings. 0 turns it off.
   * @default 1.5
   */
  classifier?: number;
  /** A tool's share of `classifier` is `(n / (n + classifierHalf))²` for its `n` wordings. @default 10 */
  classifierHalf?: number;
  /**
   * Every score of a request is raised alike by this many times the best wording evidence of any
   * tool (how well the request matches past served requests): ranks stay as they are, and the
   * best score reads as "needs a tool" better for abstaining (in a study of MetaTool's
   * even fold 1, all traffic as wordings, "no tool" AUROC of the best score 0.82 → 0.93; see
   * docs/learning.md). 0 leaves the scores as the cards and terms give them.
   * @default 2
   */
  confidence?: number;
}

/**
 * How many of the tools the cards alone rank first stay offered whatever the wording terms say
 * (see {@link rankWithWordings}). None: with the calibrated terms (a tool's wordings move it by
 * how much better or worse they match than its card) keeping the cards' best two cost even fold 1
 * a point of recall@5 and saved no long-tail request (docs/learning.md). With the old additive
 * bonus, two had been needed (docs/routing.md).
 */
export const CARD_BEST_KEPT = 0;

/** The defaults of {@link WordingsOptions}. */
export const DEFAULT_WORDINGS: Readonly<Required<WordingsOptions>> = Object.freeze({
  enabled: true,
  cap: 200,
  best: 3,
  check: 0,
  keep: CARD_BEST_KEPT,
  weight: 0.85,
  lift: 3,
  lower: 20,
  sticky: 0,
  standOut: 2,
  sample: 300,
  classifier: 1.5,
  classifierHalf: 10,
  confidence: 2,
});

/** The counts among the options, each with the least it may be. */
const COUNT_MINIMUMS = [
  ["cap", 1],
  ["best", 1],
  ["check", 0],
  ["keep", 0],
  ["sample", 1],
] as const;

/** The options with defaults applied, checked. @throws InvalidInput */
export function wordingsOptions(options: WordingsOptions | boolean | undefined): Required<WordingsOptions> {
  const given = typeof options === "boolean" ? { enabled: options } : options ? { enabled: true, ...options } : {};
  const o = { ...DEFAULT_WORDINGS, ...definedOnly(given) };
  for (const key of ["weight", "lift", "lower", "sticky", "classifier", "classifierHalf", "confidence"] as const) {
    if (!Number.isFinite(o[key]) || o[key] < 0 || (key === "weight" && o[key] > 1)) {
      throw new InvalidInput(
        `ToolIndex: wordings.${key} must be a number of at least 0 (weight at most 1); got ${String(o[key])}.`,
        {
          context: { [key]: o[key] },
        },
      );
    }
  }
  const bad = badCount(o, COUNT_MINIMUMS);
  if (bad) {
    const [key, least] = bad;
    throw new InvalidInput(
      `ToolIndex: wordings.${key} must be a whole number of at least ${least}; got ${String(o[key])}.`,
      { context: { [key]: o[key] } },
    );
  }
  if (!(typeof o.standOut === "number" && o.standOut < Number.POSITIVE_INFINITY)) {
    throw new InvalidInput(
      `ToolIndex: wordings.standOut must be a number (-Infinity: off); got ${String(o.standOut)}.`,
      { context: { standOut: o.standOut } },
    );
  }
  return o;
}

/** One kept wording: its gated text and a stable key (hash of the text). */
export interface Wording {
  key: string;
  text: string;
}

/** The key of a wording's text (case and spacing ignored, as duplicates are). */
export function wordingKey(text: string): string {
  return createHash("sha1").update(oneLine(text).toLowerCase()).digest("hex").slice(0, 20);
}

/**
 * The wordings to keep per tool, from turn records (oldest first): requests some registered tool
 * served, each gated as a learned text of that tool (the card's words, every tool name, and the
 * words at least two of the tool's served requests share, from distinct threads, are allowed;
 * other words are masked as `<word>`; a text aimed at the model, or masked past the gate's share,
 * is left out), duplicates once, at most `cap` a tool in spread order (newest first).
 * `containsValue` is the fingerprint check of the partition's recorded argument values (as the
 * review's vet uses it): a word it flags is never allowed, and a wording it flags is left out.
 * With `through` (the wordings gate), a tool's turns after its gate's turn id, or of a tool it
 * does not name, give no wording.
 */
export function selectWordings(
  turns: readonly Pick<TurnRecord, "id" | "requestId" | "threadId" | "request" | "servedBy">[],
  cards: readonly ToolCard[],
  cap: number,
  containsValue: (text: string) => boolean = () => false,
  through?: ReadonlyMap<string, string>,
): Map<string, Wording[]> {
  const byTool = new Map<string, { id: string; text: string; group: string }[]>();
  const known = new Set(cards.map((c) => c.name));
  const corrected = reAskedAway(turns);
  for (const t of turns) {
    if (t.servedBy === undefined || !known.has(t.servedBy) || t.request.trim() === "") continue;
    if (corrected.has(t.requestId)) continue;
    // The review's gate: only turns its guard let routing learn from (`learn/review/guard.ts`).
    if (through && !(t.id <= (through.get(t.servedBy) ?? ""))) continue;
    let list = byTool.get(t.servedBy);
    if (!list) byTool.set(t.servedBy, (list = []));
    list.push({ id: t.requestId, text: t.request, group: t.threadId ?? t.requestId });
  }
  const toolNames = cards.map((c) => c.name);
  const out = new Map<string, Wording[]>();
  for (const card of cards) {
    const served = byTool.get(card.name);
    if (!served) continue;
    const texts = routingTexts(card);
    const allowed = allowedWords({
      card: [card.name, texts.tool, ...card.author.argNames],
      toolNames,
      requests: served satisfies readonly CitedRequest[],
      isValue: containsValue,
    });
    const kept: Wording[] = [];
    const seen = new Set<string>();
    for (const i of spreadOrder(served.length)) {
      if (kept.length >= cap) break;
      const gated = gateText(served[i].text, { kind: "lesson", allowed });
      if (gated.refused !== undefined || containsValue(gated.text)) continue;
      const text = oneLine(gated.text);
      const key = wordingKey(text);
      if (text === "" || seen.has(key)) continue;
      seen.add(key);
      kept.push({ key, text });
    }
    if (kept.length > 0) out.set(card.name, kept);
  }
  return out;
}

/**
 * Requests served by one tool whose thread's next request another tool served: the user asked
 * again elsewhere, which detection reads as a confusion of the first tool (its `re_asked` rule).
 * Such a request is no wording of the tool that served it: kept, it would pull the same requests
 * back to the wrong tool, which is what a lesson for the confusion sets out to undo.
 */
export function reAskedAway(turns: readonly Pick<TurnRecord, "requestId" | "threadId" | "servedBy">[]): Set<string> {
  const last = new Map<string, Pick<TurnRecord, "requestId" | "servedBy">>();
  const away = new Set<string>();
  for (const t of turns) {
    if (t.threadId === undefined) continue;
    const before = last.get(t.threadId);
    last.set(t.threadId, t);
    if (before?.servedBy !== undefined && t.servedBy !== undefined && before.servedBy !== t.servedBy) {
      away.add(before.requestId);
    }
  }
  return away;
}

/** Records already read (a review's window), to take the wordings from instead of reading them again. */
export interface WordingRecords {
  turns: readonly TurnRecord[];
  calls: readonly CallRecord[];
  /** The wordings gate to take them through (see {@link selectWordings}); default the stored one. */
  through?: ReadonlyMap<string, string>;
}

/** The last wordings read for a partition, and what they were read from (see {@link wordingsFromLedger}). */
export interface WordingsMemo {
  stamp?: string;
  wordings?: Map<string, Wording[]>;
}

/**
 * The wordings to keep, read from the ledger: the review's window (`records`), or, when the index
 * rebuilds, the same bound read afresh: the newest `reviewTurns` turn records of the partition's
 * settings, checked against the argument values of as many newest call records (see
 * {@link selectWordings}). One window either way, so a rebuild after a review keeps what the
 * review kept. With a `memo`, records and cards unchanged since the last read give the last
 * result, without gating every wording again.
 */
export async function wordingsFromLedger(
  ledger: Ledger,
  partition: string,
  cards: readonly ToolCard[],
  options: Pick<Required<WordingsOptions>, "cap">,
  memo: WordingsMemo = {},
  records?: WordingRecords,
): Promise<Map<string, Wording[]>> {
  const limit = records ? undefined : (await ledger.getSettings(partition)).reviewTurns;
  const [turns, calls, key] = await Promise.all([
    records?.turns ?? ledger.listTurns(partition, { limit }),
    records?.calls ?? ledger.listCalls(partition, { limit }),
    ledger.fingerprintKey(partition),
  ]);
  const through = records?.through ?? gateOf(await ledger.wordingsGate(partition));
  const stamp = [
    through ? [...through].sort().join("\u0001") : "-",
    turns.length,
    turns[0]?.requestId,
    turns.at(-1)?.requestId,
    calls.length,
    calls[0]?.id,
    calls.at(-1)?.id,
    ...cards.map((c) => `${c.name}@${c.version}`),
  ].join("\u0000");
  if (memo.stamp === stamp && memo.wordings) return memo.wordings;
  const wordings = selectWordings(turns, cards, options.cap, valueCheckOf(calls, key), through);
  memo.stamp = stamp;
  memo.wordings = wordings;
  return wordings;
}

/** The stored wordings gate as a map (undefined before a review guarded the partition: no gate). */
function gateOf(gate: { tools: Record<string, string> } | null): Map<string, string> | undefined {
  return gate ? new Map(Object.entries(gate.tools)) : undefined;
}

/** Best first by score, ties by name (as routing ranks). */
const byScore = (a: readonly [string, number], b: readonly [string, number]): number =>
  b[1] - a[1] || a[0].localeCompare(b[0]);

/**
 * The first `k` tools (score at least `minScore`) by card score plus wording term (`terms`, none
 * without wordings), best first. The `keep` tools the cards alone put first stay offered: one the
 * terms push out takes a place at the end, in score order. Wordings re-rank what the cards offer;
 * they never take away the tools a card alone was surest of, though no traffic yet showed them
 * the words of this request (a place name other tools' wordings are full of).
 */
export function rankWithWordings(
  cards: ReadonlyMap<string, number>,
  terms: ReadonlyMap<string, number> | undefined,
  k: number,
  minScore: number,
  keep = CARD_BEST_KEPT,
): [string, number][] {
  const scored = [...cards].map(([tool, card]): [string, number] => [tool, card + (terms?.get(tool) ?? 0)]);
  const ranked = scored.filter(([, score]) => score >= minScore).sort(byScore);
  const kept = Math.min(keep, k - 1);
  if (!terms || kept < 1) return ranked.slice(0, k);
  const total = new Map(ranked);
  const must = new Set(
    [...cards]
      .sort(byScore)
      .slice(0, kept)
      .map(([tool]) => tool)
      .filter((tool) => total.has(tool)),
  );
  const out: [string, number][] = [];
  let others = k - must.size;
  for (const entry of ranked) {
    if (out.length >= k) break;
    if (must.has(entry[0])) out.push(entry);
    else if (others > 0) {
      out.push(entry);
      others -= 1;
    }
  }
  return out;
}
