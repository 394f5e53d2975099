/**
 * When a word of stored free text is released (`text/free-text.ts`): the recorder's memory of
 * which callers showed each word it could not keep. A word is released only when
 * {@link WordReleasesOptions.minCallers} distinct callers (by the caller id the recorder resolved,
 * `callerIdOf`, never by thread) showed it in one partition: its text, held at that moment from the
 * record in hand, joins the partition's released words (stored in the ledger, so a restart keeps
 * them), and rows keep it in the clear from then on. One caller never releases a word, however
 * many threads or runs show it; a run whose caller is not known counts for no one.
 *
 * Held in memory, bounded, by the recorder that owns it (no state outside that object): at most
 * {@link WordReleasesOptions.maxSightings} words with sightings (hashes and hashed caller ids,
 * never a word), the oldest forgotten first. A restart, or a sighting forgotten, loses only
 * sightings: the word then needs that many callers again, never fewer.
 */
import { createHash } from "node:crypto";
import type { AllowedWords } from "../text/vocabulary.js";
import { keepFreeText } from "../text/free-text.js";
import { BoundedMap, MAX_PARTITIONS_IN_MEMORY } from "../ledger/bounded-map.js";

/** Options of {@link WordReleases}. */
export interface WordReleasesOptions {
  /**
   * Words with sightings remembered over all partitions (about 150 bytes each).
   * @default 100_000
   */
  maxSightings?: number;
  /**
   * Released words held per partition in memory (the ledger keeps them all).
   * @default 20_000
   */
  maxReleasedPerPartition?: number;
  /**
   * Distinct callers that must show a word before it is released (never fewer than 2).
   * @default 3
   */
  minCallers?: number;
}

/** The defaults of {@link WordReleasesOptions}. */
export const DEFAULT_WORD_RELEASES: Readonly<Required<WordReleasesOptions>> = Object.freeze({
  maxSightings: 100_000,
  maxReleasedPerPartition: 20_000,
  minCallers: 3,
});

/** Where released words are stored (the ledger's `releaseWords`). */
export interface ReleasedWordsStore {
  releaseWords(partition: string, words: ReadonlyMap<string, string>): Promise<void>;
}

/** Which record a text comes from. */
export interface TextSource {
  partition: string;
  /** The thread (or, without one, the run). Kept for the caller's records; it never counts as a caller. */
  thread: string;
  /** Who the caller is within the partition, as the recorder resolved it (`callerIdOf`), when known. */
  caller?: string;
}

/** A short one-way id, so the memory holds no caller id as given. */
function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("base64url").slice(0, 16);
}

/** The release state of one recorder (each recorder holds its own). */
export class WordReleases {
  /** `partition \0 hash` → the hashed callers that showed the word (fewer than `minCallers`). */
  private readonly sightings = new Map<string, string[]>();
  /**
   * Per partition, bounded ({@link MAX_PARTITIONS_IN_MEMORY}, the least recently used forgotten
   * first): a partition forgotten stores its released words as tokens again until they are
   * released again (its stored released words still read them), never a word in the clear sooner.
   */
  private readonly released = new BoundedMap<string, Map<string, string>>(MAX_PARTITIONS_IN_MEMORY);
  /** Released words not yet stored in the ledger, per partition. */
  private readonly unsaved = new Map<string, Map<string, string>>();
  private readonly options: Readonly<Required<WordReleasesOptions>>;

  constructor(options: WordReleasesOptions = {}) {
    const merged = { ...DEFAULT_WORD_RELEASES, ...options };
    this.options = { ...merged, minCallers: Math.max(2, Math.floor(merged.minCallers)) };
  }

  /** True when the word of `hash` was released in `partition`. */
  isReleased(partition: string, hash: string): boolean {
    return this.released.get(partition)?.has(hash) === true;
  }

  /**
   * A masked text of a record, with only words that may be kept (see `keepFreeText`), noting which
   * caller showed each word it could not keep, and releasing those enough distinct callers showed.
   */
  keep(text: string, source: TextSource, allowed: AllowedWords, key: string): string {
    const { partition } = source;
    const isReleased = (hash: string): boolean => this.isReleased(partition, hash);
    const first = keepFreeText(text, allowed, key, isReleased);
    // A run with no known caller shows words to no one: it can never help release one.
    if (source.caller === undefined || first.unlisted.length === 0) return first.text;
    const caller = shortHash(`c\u0000${partition}\u0000${source.caller}`);
    let releasedNow = false;
    for (const { hash, word } of first.unlisted) {
      if (this.isReleased(partition, hash)) continue;
      const id = `${partition}\u0000${hash}`;
      const seen = this.sightings.get(id);
      if (seen === undefined) {
        this.sightings.set(id, [caller]);
        if (this.sightings.size > this.options.maxSightings) this.forgetOldest();
        continue;
      }
      if (seen.includes(caller)) continue;
      if (seen.length + 1 < this.options.minCallers) {
        seen.push(caller);
        continue;
      }
      this.sightings.delete(id);
      this.addReleased(partition, hash, word);
      let pending = this.unsaved.get(partition);
      if (pending === undefined) this.unsaved.set(partition, (pending = new Map()));
      pending.set(hash, word);
      releasedNow = true;
    }
    if (!releasedNow) return first.text;
    return keepFreeText(text, allowed, key, isReleased).text;
  }

  /** {@link WordReleases.keep} for the records of one run: what `buildRecords` calls on each free text. */
  keeperFor(
    partition: string,
    thread: string,
    caller: string | undefined,
    key: string,
  ): (text: string, allowed: AllowedWords) => string {
    const source: TextSource = { partition, thread, ...(caller !== undefined ? { caller } : {}) };
    return (text, allowed) => this.keep(text, source, allowed, key);
  }

  /**
   * Store the words released since the last call in the ledger (the writer calls it before a
   * batch's rows). A partition whose write fails keeps its words for the next call; until then its
   * earlier rows' tokens read as `<word>`: nothing is lost but a word, and no row waits for it.
   * Never throws.
   */
  async save(ledger: ReleasedWordsStore): Promise<void> {
    if (this.unsaved.size === 0) return;
    const unsaved = new Map(this.unsaved);
    this.unsaved.clear();
    for (const [partition, words] of unsaved) {
      try {
        await ledger.releaseWords(partition, words);
      } catch {
        let pending = this.unsaved.get(partition);
        if (pending === undefined) this.unsaved.set(partition, (pending = new Map()));
        for (const [hash, word] of words) if (!pending.has(hash)) pending.set(hash, word);
      }
    }
  }

  private addReleased(partition: string, hash: string, word: string): void {
    let words = this.released.get(partition);
    if (words === undefined) this.released.set(partition, (words = new Map()));
    if (words.has(hash) || words.size >= this.options.maxReleasedPerPartition) return;
    words.set(hash, word);
  }

  private forgetOldest(): void {
    const oldest = this.sightings.keys().next();
    if (!oldest.done) this.sightings.delete(oldest.value);
  }
}
