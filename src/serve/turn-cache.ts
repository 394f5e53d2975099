/**
 * What serving keeps between turns so that nothing it already has is computed again: the routed
 * set of a request (keyed by the partition, the index's revision of it, which moves whenever the
 * index re-embeds anything, for a change made here or one it followed from the partition's stored
 * version, and the request text, the sticky tools and k) and the rendered block and shown cards (keyed by what
 * they are rendered from: each card's version, which every write bumps, each guideline's time and
 * the window it was written through, and the rules and retrieved rules themselves, which are
 * short). A change anywhere moves the partition's version (`ledger/versions.ts`), which serving
 * follows before it routes; a changed rule or guideline changes the render key: the next turn
 * routes or renders again. Bounded: the least
 * recently used entry goes first.
 *
 * It also keeps the lessons a turn read (cards, settings, rules, guidelines of the tools sent) under
 * the versions of the partition and the shared scope read before them: a turn whose versions are
 * unchanged, in any process, reads nothing but them. When the versions could not be read there is
 * no stamp, and the turn reads.
 *
 * Request and rule text is held in memory only, as serving holds it while it works; nothing here
 * is stored or logged. It also keeps which request texts held no edict sentence, so an unchanged
 * request is not searched for edicts again.
 */
import type { LessonsBlock } from "../prompt/lessons-block.js";
import type { BlockRule } from "../prompt/lessons-block.js";
import type { Guideline, ToolCard } from "../ledger/schema.js";
import type { RoutedTools } from "../routing/router.js";
import type { Rule } from "../rules/model.js";

/** Entries each map of a {@link TurnCache} keeps. */
const KEPT_ENTRIES = 1000;

/** What a turn renders: the system block and the cards cut to what the model is shown. */
export interface Rendered {
  block: LessonsBlock;
  shownCards: ToolCard[];
}

/** What a render depends on, as {@link TurnCache.renderKey} reads it. */
export interface RenderInputs {
  sent: readonly string[];
  cards: readonly ToolCard[];
  showLearnedExamples: boolean;
  rules: readonly Rule[];
  guidelines: readonly { tool: string; guideline: Guideline | null }[];
  retrieved: readonly BlockRule[];
  maxTokens: number;
  lessons: boolean;
}

const SEP = "\u0000";

/** Lessons read under a stamp, from one ledger. */
interface KeptRead<T> {
  ledger: object;
  stamp: string;
  read: T;
}

/** One adapter's routed sets, lessons read and renders, each map bounded to {@link KEPT_ENTRIES}. */
export class TurnCache<Read = unknown> {
  private readonly routes = new Map<string, RoutedTools>();
  private readonly reads = new Map<string, KeptRead<Read>>();
  private readonly renders = new Map<string, Rendered>();
  /** Request texts searched for edicts that held none (the search is pure: the same text, the same answer). */
  private readonly noEdicts = new Map<string, true>();

  /** The key of a routed set: the same key, the same routing (the index unchanged since). */
  static routeKey(partition: string, revision: number, k: number, sticky: readonly string[], request: string): string {
    return [partition, revision, k, sticky.join(","), request].join(SEP);
  }

  /** The key of the lessons read for a turn: the partition, the tools sent, whether the block is read. */
  static readKey(partition: string, sent: readonly string[], lessons: boolean): string {
    return [partition, lessons ? 1 : 0, sent.join(",")].join(SEP);
  }

  /** The key of a render: card versions, and the rules, guidelines and retrieved rules as rendered. */
  static renderKey(inputs: RenderInputs): string {
    const parts: (string | number)[] = [inputs.maxTokens, inputs.lessons ? 1 : 0, inputs.showLearnedExamples ? 1 : 0];
    parts.push(inputs.sent.join(","));
    for (const c of inputs.cards) parts.push(`c${c.name}@${c.version}:${c.updatedAt}`);
    for (const r of inputs.rules) parts.push(`r${r.id}:${r.tool}:${r.priority}:${r.updatedAt}:${r.rule}`);
    for (const g of inputs.guidelines)
      if (g.guideline) parts.push(`g${g.tool}:${g.guideline.at}:${g.guideline.through}`);
    for (const r of inputs.retrieved) parts.push(`n${r.tool}:${r.rule}`);
    return parts.join(SEP);
  }

  /** The routed set kept under `key`, if any. */
  route(key: string): RoutedTools | undefined {
    return touch(this.routes, key);
  }

  /** Keep a routed set (one that routing chose; a skipped routing is never kept). */
  keepRoute(key: string, routed: RoutedTools): void {
    keep(this.routes, key, routed);
  }

  /** The lessons kept under `key` when they were read from `ledger` under `stamp`, if any. */
  read(key: string, ledger: object, stamp: string): Read | undefined {
    const kept = touch(this.reads, key);
    return kept && kept.ledger === ledger && kept.stamp === stamp ? kept.read : undefined;
  }

  /** Keep the lessons read from `ledger` under `stamp` (the stamp taken before the read). */
  keepRead(key: string, ledger: object, stamp: string, read: Read): void {
    keep(this.reads, key, { ledger, stamp, read });
  }

  /** Whether `text` was searched for edicts before and held none. */
  heldNoEdict(text: string): boolean {
    return touch(this.noEdicts, text) !== undefined;
  }

  /** Remember that `text` holds no edict sentence. */
  keepNoEdict(text: string): void {
    keep(this.noEdicts, text, true);
  }

  /** The render kept under `key`, or `render()`'s, kept. */
  render(key: string, render: () => Rendered): Rendered {
    const kept = touch(this.renders, key);
    if (kept) return kept;
    const rendered = render();
    keep(this.renders, key, rendered);
    return rendered;
  }
}

function touch<V>(map: Map<string, V>, key: string): V | undefined {
  const value = map.get(key);
  if (value !== undefined) {
    map.delete(key);
    map.set(key, value);
  }
  return value;
}

function keep<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > KEPT_ENTRIES) map.delete(map.keys().next().value as string);
}
