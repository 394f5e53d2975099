import { z } from "zod";
import { type LedgerContext, listNamespace, namespaceOf, parseItem } from "./store-io.js";

/**
 * Released words of stored free text (`text/free-text.ts`, `record/word-releases.ts`): words a
 * partition's records showed from enough distinct callers (`record/word-releases.ts`: three by
 * default, never one caller's threads), which its rows may keep in the clear and its earlier
 * rows' word tokens read as.
 *
 * Key layout: `[root, partition, "words"]`, key = the word's hash (12 letters `a`-`p`) → `{ word }`.
 *
 * Invariants:
 * - only words that passed the release rule are written; a word one caller showed is never here;
 * - a row is never changed or deleted once written (the same hash always names the same word);
 * - a corrupt row is skipped and counted: its tokens read as `<word>`.
 */
export const ReleasedWordSchema = z.object({ word: z.string().min(1).max(200) });

/** The hash of a released word: its store key. */
const HASH = /^[a-p]{12}$/;

/** How long a partition's released words read from the store are used before reading them again. */
export const RELEASED_WORDS_TTL_MS = 2_000;
/** Partitions whose words are held at once; the one read longest ago is dropped first. */
const MAX_CACHED_PARTITIONS = 1_024;

/**
 * The words read, per partition, held by this ledger's collection (one per `Ledger`, no state
 * outside it): this ledger's own writes are seen at once, other writers' within the TTL.
 */
type Cache = Map<string, { words: Map<string, string>; at: number }>;

export class ReleasedWordRows {
  private readonly cache: Cache = new Map();

  constructor(private readonly ctx: LedgerContext) {}

  /** The partition's released words, hash → word (read at most every {@link RELEASED_WORDS_TTL_MS}). */
  async list(partition: string): Promise<ReadonlyMap<string, string>> {
    const cached = this.cache.get(partition);
    if (cached !== undefined && Date.now() - cached.at < RELEASED_WORDS_TTL_MS) return cached.words;
    const items = await listNamespace(this.ctx, namespaceOf(this.ctx, partition, "words"));
    const words = new Map<string, string>();
    for (const item of items) {
      if (!HASH.test(item.key)) continue;
      const row = parseItem(this.ctx, ReleasedWordSchema, item);
      if (row) words.set(item.key, row.word);
    }
    this.cache.delete(partition);
    this.cache.set(partition, { words, at: Date.now() });
    if (this.cache.size > MAX_CACHED_PARTITIONS) this.cache.delete(this.cache.keys().next().value as string);
    return words;
  }

  /** Store released words (one store batch); this ledger reads them at once. */
  async put(partition: string, words: ReadonlyMap<string, string>): Promise<void> {
    const rows = [...words].filter(([hash, word]) => HASH.test(hash) && ReleasedWordSchema.safeParse({ word }).success);
    if (rows.length === 0) return;
    const ns = namespaceOf(this.ctx, partition, "words");
    await this.ctx.store.batch(
      rows.map(([hash, word]) => ({ namespace: ns, key: hash, value: { word }, index: false as const })),
    );
    const cached = this.cache.get(partition);
    if (cached !== undefined) for (const [hash, word] of rows) cached.words.set(hash, word);
  }
}
