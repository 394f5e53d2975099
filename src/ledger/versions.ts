/**
 * Partition versions: the store's word, to every process, that what serving or routing reads of
 * a partition changed. Every write of a card, rule, setting or guideline, and every change of the
 * wordings routing keeps, is announced here once its store call is over: the partition's version
 * row gets the next number, with a short log of what changed (which kinds, which tools).
 *
 * Key layout: `[root, partition, "version"]`, key `"current"` → {@link PartitionVersion}.
 *
 * Invariants:
 * - the number only grows: each announcement is a compare-and-set on it (`cas.ts`: one
 *   transaction on `SqliteStore` and on the store `openPostgresStore` returns, across processes),
 *   retried when another writer moved it first, so no announcement is lost to a race;
 * - announced after the write settles (also when it failed: it may have written part), so a
 *   reader that takes the version before it reads, and keeps what it read under that version,
 *   reads again on the first turn after any change, from any process;
 * - the log keeps the newest {@link LOG_ENTRIES} announcements; a reader further behind, or one
 *   that meets an announcement naming more than {@link LOG_TOOLS} tools, refreshes the partition
 *   whole ({@link changesSince} says `all`).
 *
 * Serving reads the version rows of a turn's partition and of the shared scope in one store batch
 * per turn (`serve/turn-server.ts`); that read is all a quiet turn costs.
 */
import type { Item } from "@langchain/langgraph";
import { StoreUnavailable } from "../errors.js";
import { casField, compareAndSet } from "./cas.js";
import type { BaseStore } from "@langchain/langgraph";
import { namespaceFor } from "./keys.js";

/**
 * What versions need of a ledger's context (`collections/store-io.ts`, which holds the ledger's
 * {@link Announcer}): named here so that this module does not import the collections'.
 */
export interface VersionsContext {
  readonly store: BaseStore;
  readonly root: string;
  readonly counters: { skippedRows: number };
  readonly announcer: Announcer;
  report(kind: "row_skipped", message: string, context?: Record<string, string>): void;
}

/** What an announcement says changed. */
export type ChangeKind = "cards" | "rules" | "settings" | "guidelines" | "wordings";

/** One announced change. */
export interface VersionEntry {
  /** The version number this change made. */
  seq: number;
  kinds: ChangeKind[];
  /** The tools whose cards or wordings changed (empty for rules and settings); `null`: too many to name. */
  tools: string[] | null;
}

/** A partition's version as stored: the number and the newest announcements, oldest first. */
export interface PartitionVersion {
  seq: number;
  log: VersionEntry[];
}

/** One change to announce. */
export interface Announcement {
  partition: string;
  kind: ChangeKind;
  /** The tools changed, for cards and wordings. */
  tools?: readonly string[];
}

/** What a reader at some version has to catch up with. */
export interface Catchup {
  kinds: ReadonlySet<ChangeKind>;
  /** Tools changed since; `"all"`: refresh the partition whole. */
  tools: ReadonlySet<string> | "all";
}

/** A partition never written: version 0. */
const NO_VERSION: PartitionVersion = Object.freeze({ seq: 0, log: [] });

/** Announcements each version row keeps. */
const LOG_ENTRIES = 32;
/** Most tools one announcement names; past it, readers refresh the partition whole. */
const LOG_TOOLS = 64;
/** Tries of the compare-and-set before an announcement fails. */
const ANNOUNCE_TRIES = 40;
const KEY = "current";

/** The version rows of these partitions, in one store batch (a missing or damaged row is version 0). */
export async function readVersions(ctx: VersionsContext, partitions: readonly string[]): Promise<PartitionVersion[]> {
  const items = await ctx.store.batch(
    partitions.map((p) => ({ namespace: namespaceFor(ctx.root, p, "version"), key: KEY })),
  );
  return items.map((item, i) => {
    const version = parseVersion(item as Item | null);
    if (version === DAMAGED) {
      ctx.counters.skippedRows += 1;
      ctx.report(
        "row_skipped",
        "A partition's version row does not parse; read as version 0 (the next change rewrites it).",
        {
          partition: partitions[i],
        },
      );
      return NO_VERSION;
    }
    return version;
  });
}

/**
 * `write`, then one announcement per partition (also when `write` failed, since it may have
 * written part). The write's own error wins over an announcement's.
 * @throws StoreUnavailable when the write succeeded but could not be announced: the change is
 *   stored, and running agents serve it after the next announced change of the partition.
 */
export async function announcedWrite<T>(
  ctx: VersionsContext,
  changes: readonly Announcement[],
  write: () => Promise<T>,
): Promise<T> {
  let result: T;
  try {
    result = await write();
  } catch (error) {
    await Promise.allSettled(changes.map((c) => announce(ctx, c)));
    throw error;
  }
  for (const change of changes) await announce(ctx, change);
  return result;
}

/**
 * Gives partitions their next versions, one compare-and-set at a time per partition: changes that
 * come while one is being written are merged into the next one (one log entry naming every kind
 * and tool), so a burst of writes from one ledger costs a few announcements and never starves on
 * its own races. One per ledger (`LedgerContext.announcer`).
 */
export class Announcer {
  /** Per partition: the changes waiting for the next compare-and-set, and who waits on them. */
  private readonly waiting = new Map<string, { kinds: Set<ChangeKind>; tools: Set<string>; waiters: Waiter[] }>();
  private readonly running = new Set<string>();

  /** Announce `change` (merged with others of its partition waiting); resolves to the version that carries it. */
  announce(ctx: VersionsContext, change: Announcement): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      let next = this.waiting.get(change.partition);
      if (!next) {
        next = { kinds: new Set(), tools: new Set(), waiters: [] };
        this.waiting.set(change.partition, next);
      }
      next.kinds.add(change.kind);
      for (const tool of change.tools ?? []) next.tools.add(tool);
      next.waiters.push({ resolve, reject });
      if (!this.running.has(change.partition)) void this.drain(ctx, change.partition);
    });
  }

  private async drain(ctx: VersionsContext, partition: string): Promise<void> {
    this.running.add(partition);
    try {
      for (let next = this.waiting.get(partition); next; next = this.waiting.get(partition)) {
        this.waiting.delete(partition);
        try {
          const seq = await writeNext(ctx, partition, [...next.kinds], [...next.tools]);
          for (const w of next.waiters) w.resolve(seq);
        } catch (error) {
          for (const w of next.waiters) w.reject(error);
        }
      }
    } finally {
      this.running.delete(partition);
    }
  }
}

interface Waiter {
  resolve(seq: number): void;
  reject(error: unknown): void;
}

/** Announce one change through the ledger's {@link Announcer}. */
export function announce(ctx: VersionsContext, change: Announcement): Promise<number> {
  return ctx.announcer.announce(ctx, change);
}

/** Write the partition's next version (compare-and-set, retried with a growing jittered wait on a race). */
async function writeNext(
  ctx: VersionsContext,
  partition: string,
  kinds: ChangeKind[],
  changed: string[],
): Promise<number> {
  const namespace = namespaceFor(ctx.root, partition, "version");
  const tools = [...new Set(changed)].sort();
  let lastError: unknown;
  for (let attempt = 0; attempt < ANNOUNCE_TRIES; attempt++) {
    try {
      const item = await ctx.store.get(namespace, KEY);
      const parsed = parseVersion(item);
      const current = parsed === DAMAGED ? NO_VERSION : parsed;
      const seq = current.seq + 1;
      const entry: VersionEntry = { seq, kinds: kinds.sort(), tools: tools.length > LOG_TOOLS ? null : tools };
      const next: PartitionVersion = { seq, log: [...current.log, entry].slice(-LOG_ENTRIES) };
      const outcome = await compareAndSet(
        ctx.store,
        [{ namespace, key: KEY, field: "seq", oneOf: [item ? casField(item.value, "seq") : null] }],
        [{ namespace, key: KEY, value: next as unknown as Record<string, unknown>, index: false }],
      );
      if (outcome.ok) return seq;
    } catch (error) {
      lastError = error;
    }
    // Another writer moved the version first (or the store hiccuped): read it again after a wait.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * (attempt + 1))));
  }
  throw new StoreUnavailable(
    `A change to partition "${clip(partition)}" was stored but could not be announced to other processes after ${ANNOUNCE_TRIES} tries; running agents serve it after the partition's next announced change.`,
    { context: { partition: clip(partition), kinds: kinds.join(",") }, cause: lastError },
  );
}

/**
 * What a reader that last caught up at `seen` must refresh to be at `now`: nothing (`undefined`),
 * the kinds and tools the log names, or the whole partition when the log no longer reaches back
 * to `seen` (or the row went back, as when the store was emptied).
 */
export function changesSince(now: PartitionVersion, seen: number): Catchup | undefined {
  if (now.seq === seen) return undefined;
  const all: Catchup = {
    kinds: new Set<ChangeKind>(["cards", "rules", "settings", "guidelines", "wordings"]),
    tools: "all",
  };
  if (now.seq < seen) return all;
  const entries = now.log.filter((e) => e.seq > seen);
  // Each number from seen+1 to now.seq must be in the log for it to say everything that changed.
  if (entries.length !== now.seq - seen) return all;
  const kinds = new Set<ChangeKind>();
  const tools = new Set<string>();
  for (const entry of entries) {
    for (const kind of entry.kinds) kinds.add(kind);
    if (entry.tools === null) return { kinds, tools: "all" };
    for (const tool of entry.tools) tools.add(tool);
  }
  return { kinds, tools };
}

/** A row that is there but does not parse. */
const DAMAGED: PartitionVersion = Object.freeze({ seq: -1, log: [] });

function parseVersion(item: Item | null): PartitionVersion {
  if (!item) return NO_VERSION;
  const value = item.value as Partial<PartitionVersion>;
  if (typeof value.seq !== "number" || !Number.isSafeInteger(value.seq) || value.seq < 0 || !Array.isArray(value.log))
    return DAMAGED;
  const log = value.log.filter(
    (e): e is VersionEntry =>
      typeof e === "object" &&
      e !== null &&
      typeof e.seq === "number" &&
      Array.isArray(e.kinds) &&
      (e.tools === null || (Array.isArray(e.tools) && e.tools.every((t) => typeof t === "string"))),
  );
  return { seq: value.seq, log };
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
