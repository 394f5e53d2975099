/**
 * What the free texts of a run may keep: a tool's error message and output and the user's
 * request are stored through the gate with the allow-list lessons use (`text/vocabulary.ts`):
 * the words of the tool's card, the registered tool names and the common-word vocabulary; every
 * other word becomes `<word>`. A person's name, a street, a date of birth in words, an order id
 * of letters or a password that only a tool's error or output (or the user) wrote, and that no
 * detector knows, is never stored.
 *
 * Words shared by cited records of different threads are a learning-time source (the vet's):
 * a stored text has no other records to compare with, so it keeps none of them.
 */
import { cardWords } from "../ledger/cards.js";
import type { Ledger } from "../ledger/ledger.js";
import type { ToolCard } from "../ledger/schema.js";
import { type GateResult, gateText } from "../text/gate.js";
import type { Masker } from "../text/mask.js";
import { allowedWords, type AllowedWords } from "../text/vocabulary.js";

/** The registered tools of a partition as the allow-list reads them: names, and each card's words. */
export interface RegisteredWords {
  /** Every registered tool name of the partition. */
  toolNames: readonly string[];
  /** The words of each registered tool's card (`cardWords`), by tool name. */
  cards: ReadonlyMap<string, readonly string[]>;
}

/** No registered tool known: the vocabulary and the run's own tool names only. */
export const NO_REGISTERED_WORDS: RegisteredWords = Object.freeze({ toolNames: [], cards: new Map() });

/** The allow-list's view of a partition's cards. */
export function registeredWords(cards: readonly Pick<ToolCard, "name" | "author">[]): RegisteredWords {
  return { toolNames: cards.map((c) => c.name), cards: new Map(cards.map((c) => [c.name, cardWords(c)])) };
}

/**
 * The allowed words of a free text about these tools: their cards' words (or their names when
 * not registered), every registered tool name and the common-word vocabulary (which has no
 * numbers spelled out: they are masked as digits are).
 */
export function freeTextWords(registered: RegisteredWords, tools: readonly string[]): AllowedWords {
  return allowedWords({
    card: tools.flatMap((tool) => registered.cards.get(tool) ?? [tool]),
    toolNames: [...registered.toolNames, ...tools],
  });
}

/**
 * A free text as it is stored: normalized, text aimed at the model reported, the run's values and
 * the detectors' spans masked, every digit `#`, and every word not on `allowed` `<word>`.
 */
export function storedFreeText(text: string, masker: Masker | undefined, allowed: AllowedWords): GateResult {
  return gateText(text, { kind: "stored", ...(masker ? { masker } : {}), allowed });
}

/** How long the recorder keeps a partition's registered words before it reads them again. */
const REGISTERED_WORDS_TTL_MS = 30_000;
/** Soonest the recorder reads them again for a tool it does not know (a tool never registered). */
const REGISTERED_WORDS_REREAD_MS = 1_000;
/** Partitions whose words are held at most (then the copy starts over). */
const MAX_PARTITIONS_HELD = 1_000;

/**
 * The recorder's copy of each partition's registered words, read from the ledger at most once per
 * {@link REGISTERED_WORDS_TTL_MS} (and again when a run calls a tool it does not know yet). A
 * store that cannot be read leaves the run with {@link NO_REGISTERED_WORDS}: its texts are then
 * masked more, never less.
 */
export class RegisteredWordsCache {
  private readonly byPartition = new Map<string, { at: number; words: RegisteredWords }>();

  constructor(private readonly ledger: Ledger) {}

  async of(partition: string, tools: readonly string[]): Promise<RegisteredWords> {
    const held = this.byPartition.get(partition);
    const age = held === undefined ? Infinity : Date.now() - held.at;
    const known = held !== undefined && tools.every((t) => held.words.cards.has(t));
    if (held && (age < REGISTERED_WORDS_REREAD_MS || (age < REGISTERED_WORDS_TTL_MS && known))) return held.words;
    try {
      const words = registeredWords(await this.ledger.listCards(partition));
      if (this.byPartition.size >= MAX_PARTITIONS_HELD) this.byPartition.clear();
      this.byPartition.set(partition, { at: Date.now(), words });
      return words;
    } catch {
      return held?.words ?? NO_REGISTERED_WORDS;
    }
  }
}
