import { z } from "zod";
import { type LedgerContext, listNamespace, namespaceOf, parseItem } from "./store-io.js";

/**
 * Released words of stored free text (`text/free-text.ts`, `record/word-releases.ts`): words a
 * partition's records showed from two different threads (and callers, where several share it),
 * which its rows may keep in the clear and its earlier rows' word tokens read as.
 *
 * Key layout: `[root, partition, "words"]`, key = the word's hash (12 letters `a`-`p`) → `{ word }`.
 *
 * Invariants:
 * - only words that passed the release rule are written; a word one thread showed is never here;
 * - a row is never changed or deleted once written (the same hash always names the same word);
 * - a corrupt row is skipped and counted: its tokens read as `<word>`.
 */
export const ReleasedWordSchema = z.object({ word: z.string().min(1).max(200) });

/** The hash of a released word: its store key. */
const HASH = /^[a-p]{12}$/;

/** How long a partition's released words read from the store are used before reading them again. */
export const RELEASED_WORDS_TTL_MS = 2_000;

type Cache = Map<string, { words: Map<string, string>; at: number }>;

/** Read words by store and root, so every ledger of one process over one store sees the others' writes at once. */
const caches = new WeakMap<object, Map<string, Cache>>();

export class ReleasedWordRows {
  private readonly cache: Cache;

  constructor(private readonly ctx: LedgerContext) {
    let byRoot = caches.get(ctx.store);
    if (byRoot === undefined) caches.set(ctx.store, (byRoot = new Map()));
    let cache = byRoot.get(ctx.root);
    if (cache === undefined) byRoot.set(ctx.root, (cache = new Map()));
    this.cache = cache;
  }

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
    this.cache.set(partition, { words, at: Date.now() });
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
