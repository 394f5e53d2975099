/**
 * When a word of stored free text is released (`text/free-text.ts`): the recorder's memory of
 * which thread (and caller) first showed each word it could not keep. A word shown again by a
 * different thread — and, in a partition several callers share, by a different caller — is
 * released: its text, held at that moment from the record in hand, joins the partition's released
 * words (stored in the ledger, so a restart keeps them), and rows keep it in the clear from then on.
 *
 * Held in memory, bounded: at most {@link WordReleasesOptions.maxSightings} first sightings (hashes
 * and hashed thread/caller ids, never a word), the oldest forgotten first. A restart, or a sighting
 * forgotten, loses only that first sighting: the word is then released when two other threads show it.
 */
import { createHash } from "node:crypto";
import type { AllowedWords } from "../text/vocabulary.js";
import { keepFreeText } from "../text/free-text.js";

/** Options of {@link WordReleases}. */
export interface WordReleasesOptions {
  /**
   * First sightings remembered over all partitions (about 100 bytes each).
   * @default 100_000
   */
  maxSightings?: number;
  /**
   * Released words held per partition in memory (the ledger keeps them all).
   * @default 20_000
   */
  maxReleasedPerPartition?: number;
}

/** The defaults of {@link WordReleasesOptions}. */
export const DEFAULT_WORD_RELEASES: Readonly<Required<WordReleasesOptions>> = Object.freeze({
  maxSightings: 100_000,
  maxReleasedPerPartition: 20_000,
});

/** Where released words are stored (the ledger's `releaseWords`). */
export interface ReleasedWordsStore {
  releaseWords(partition: string, words: ReadonlyMap<string, string>): Promise<void>;
}

/** Who showed a word first. */
interface Sighting {
  thread: string;
  caller: string | undefined;
}

/** Which record a text comes from. */
export interface TextSource {
  partition: string;
  /** The thread (or, without one, the run: each run its own conversation). */
  thread: string;
  /** Who the caller is within the partition, as the recorder resolved it (`callerIdOf`), when known. */
  caller?: string;
}

/** A short one-way id, so the memory holds no thread or user id as given. */
function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("base64url").slice(0, 16);
}

/** The release state of one recorder (one per ledger: {@link wordReleasesOf}). */
export class WordReleases {
  private readonly sightings = new Map<string, Sighting>();
  /** Per partition: the callers seen (two are enough to know it is shared). */
  private readonly callers = new Map<string, Set<string>>();
  private readonly released = new Map<string, Map<string, string>>();
  /** Released words not yet stored in the ledger, per partition. */
  private readonly unsaved = new Map<string, Map<string, string>>();
  private readonly options: Readonly<Required<WordReleasesOptions>>;

  constructor(options: WordReleasesOptions = {}) {
    this.options = { ...DEFAULT_WORD_RELEASES, ...options };
  }

  /** True when the word of `hash` was released in `partition`. */
  isReleased(partition: string, hash: string): boolean {
    return this.released.get(partition)?.has(hash) === true;
  }

  /**
   * A masked text of a record, with only words that may be kept (see `keepFreeText`), noting who
   * showed each word it could not keep, and releasing those a different thread (and caller) showed first.
   */
  keep(text: string, source: TextSource, allowed: AllowedWords, key: string): string {
    const { partition } = source;
    const thread = shortHash(`t\u0000${source.thread}`);
    const caller = source.caller === undefined ? undefined : shortHash(`c\u0000${source.caller}`);
    this.noteCaller(partition, caller);
    const shared = (this.callers.get(partition)?.size ?? 0) > 1;
    const first = keepFreeText(text, allowed, key, (hash) => this.isReleased(partition, hash));
    let releasedNow = false;
    for (const { hash, word } of first.unlisted) {
      if (this.isReleased(partition, hash)) continue;
      const id = `${partition}\u0000${hash}`;
      const seen = this.sightings.get(id);
      if (seen === undefined) {
        this.sightings.set(id, { thread, caller });
        if (this.sightings.size > this.options.maxSightings) this.forgetOldest();
        continue;
      }
      const otherThread = seen.thread !== thread;
      const otherCaller = !shared || (seen.caller !== undefined && caller !== undefined && seen.caller !== caller);
      if (!otherThread || !otherCaller) continue;
      this.sightings.delete(id);
      this.addReleased(partition, hash, word);
      let pending = this.unsaved.get(partition);
      if (pending === undefined) this.unsaved.set(partition, (pending = new Map()));
      pending.set(hash, word);
      releasedNow = true;
    }
    if (!releasedNow) return first.text;
    return keepFreeText(text, allowed, key, (hash) => this.isReleased(partition, hash)).text;
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

  private noteCaller(partition: string, caller: string | undefined): void {
    let seen = this.callers.get(partition);
    if (seen === undefined) this.callers.set(partition, (seen = new Set()));
    if (seen.size < 2) seen.add(caller ?? "");
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

const perLedger = new WeakMap<object, WordReleases>();

/** The {@link WordReleases} of a ledger (one per store it writes to), made on first use. */
export function wordReleasesOf(ledger: { store: object }): WordReleases {
  let releases = perLedger.get(ledger.store);
  if (!releases) {
    releases = new WordReleases();
    perLedger.set(ledger.store, releases);
  }
  return releases;
}
